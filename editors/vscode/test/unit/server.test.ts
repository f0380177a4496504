import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

import { carriedServer, expandPath, findServer, searchPath, ServerNotFound, versionMismatch } from '../../src/server';

const dir = mkdtempSync(path.join(os.tmpdir(), 'control-room-server-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function program(name: string, executable = true): string {
  const file = path.join(dir, name);
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, executable ? 0o755 : 0o644);
  return file;
}

test('paths are expanded from the home folder and the manuscript', () => {
  assert.equal(expandPath('~/bin/control-room', '/novel'), path.join(os.homedir(), 'bin/control-room'));
  assert.equal(expandPath('${workspaceFolder}/bin/cr', '/novel'), path.resolve('/novel/bin/cr'));
  assert.equal(expandPath('bin/cr', '/novel'), path.resolve('/novel/bin/cr'));
});

test('the setting wins, and a wrong one says so', { skip: process.platform === 'win32' }, async () => {
  const good = program('my-control-room');
  assert.equal(await findServer(good, '/'), good);
  const notExecutable = program('not-executable', false);
  await assert.rejects(findServer(notExecutable, '/'), (error: unknown) => {
    assert.ok(error instanceof ServerNotFound);
    assert.ok(error.fromSetting);
    assert.match(error.message, /controlRoom\.server\.path/);
    return true;
  });
});

test('PATH is searched in order', { skip: process.platform === 'win32' }, async () => {
  const first = path.join(dir, 'first');
  const second = path.join(dir, 'second');
  mkdirSync(first);
  mkdirSync(second);
  writeFileSync(path.join(second, 'control-room'), '#!/bin/sh\n', { mode: 0o755 });
  assert.equal(await searchPath([first, second].join(path.delimiter)), path.join(second, 'control-room'));
  assert.equal(await searchPath(first), undefined);
});

test('with no setting and nothing on PATH the message says how to fix it', async () => {
  const saved = process.env.PATH;
  process.env.PATH = dir;
  try {
    await assert.rejects(findServer('', '/'), (error: unknown) => {
      assert.ok(error instanceof ServerNotFound);
      assert.equal(error.fromSetting, false);
      assert.match(error.message, /carries no control-room program/);
      assert.match(error.message, /none is on your PATH/);
      assert.match(error.message, /install\.sh/);
      assert.match(error.message, /controlRoom\.server\.path/);
      return true;
    });
  } finally {
    process.env.PATH = saved;
  }
});

test('the carried server comes after the setting and before PATH', { skip: process.platform === 'win32' }, async () => {
  const extension = path.join(dir, 'extension');
  mkdirSync(path.join(extension, 'server'), { recursive: true });
  const carried = carriedServer(extension);
  assert.equal(carried, path.join(extension, 'server', 'control-room'));
  writeFileSync(carried, '#!/bin/sh\n', { mode: 0o755 });
  const onPath = path.join(dir, 'on-path');
  mkdirSync(onPath);
  writeFileSync(path.join(onPath, 'control-room'), '#!/bin/sh\n', { mode: 0o755 });
  const saved = process.env.PATH;
  process.env.PATH = onPath;
  try {
    assert.equal(await findServer('', '/', carried), carried);
    const setting = program('set-by-the-writer');
    assert.equal(await findServer(setting, '/', carried), setting);
    // Unpacked without its executable bit, it is given it back.
    chmodSync(carried, 0o644);
    assert.equal(await findServer('', '/', carried), carried);
    // A package for another platform carries none: PATH is next.
    assert.equal(await findServer(undefined, '/', path.join(dir, 'nowhere', 'control-room')), path.join(onPath, 'control-room'));
  } finally {
    process.env.PATH = saved;
  }
});

test('a server of another version is one message saying what to do', () => {
  assert.equal(versionMismatch('/bin/cr', 'control-room 0.1.0', '0.1.0'), undefined);
  const message = versionMismatch('/bin/cr', 'control-room 0.0.9', '0.1.0');
  assert.ok(message !== undefined);
  assert.match(message, /\/bin\/cr is version 0\.0\.9, but this extension is version 0\.1\.0/);
  assert.match(message, /Install the matching program/);
  assert.match(versionMismatch('/bin/cr', 'something else', '0.1.0') ?? '', /answers "something else"/);
});
