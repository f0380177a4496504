import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type Activity, ActivityTracker, parseToken, shortStep, statusText } from '../../src/activity';

test('run and conference tokens are followed, others not', () => {
  assert.deepEqual(parseToken('control-room/run/20260101-abc'), { kind: 'run', id: '20260101-abc' });
  assert.deepEqual(parseToken('control-room/conference/c1'), { kind: 'conference', id: 'c1' });
  assert.equal(parseToken('control-room/index'), undefined);
  assert.equal(parseToken(7), undefined);
});

test('a run is tracked from begin through its reports to its end', () => {
  const tracker = new ActivityTracker();
  const seen: (readonly Activity[])[] = [];
  tracker.onDidChange((activities) => seen.push(activities));
  const token = 'control-room/run/r1';
  tracker.handle('control-room/index', { kind: 'begin', title: 'Indexing' });
  tracker.handle(token, { kind: 'begin', title: 'Draft scene: SCN-x', message: 'starting', percentage: 0 });
  tracker.handle(token, { kind: 'report', message: '[2/5] draft (writer)', percentage: 20 });
  assert.equal(tracker.current.length, 1);
  assert.equal(tracker.current[0].message, '[2/5] draft (writer)');
  assert.equal(statusText(tracker.current)?.text, '$(sync~spin) Draft scene: SCN-x (writer: draft 2/5)');
  tracker.handle(token, { kind: 'end', message: 'done' });
  assert.deepEqual(tracker.current, []);
  assert.equal(statusText(tracker.current), undefined);
  assert.equal(seen.length, 3, 'begin, report and end each change the list; the index progress does not');
});

test('a report or end for an unknown token changes nothing', () => {
  const tracker = new ActivityTracker();
  let changes = 0;
  tracker.onDidChange(() => changes++);
  tracker.handle('control-room/run/ghost', { kind: 'report', message: 'x' });
  tracker.handle('control-room/run/ghost', { kind: 'end' });
  assert.equal(changes, 0);
});

test('several at once are counted', () => {
  const tracker = new ActivityTracker();
  tracker.handle('control-room/run/a', { kind: 'begin', title: 'Draft scene: A' });
  tracker.handle('control-room/run/b', { kind: 'begin', title: 'Draft scene: B' });
  assert.equal(statusText(tracker.current)?.text, '$(sync~spin) 2 runs');
  tracker.handle('control-room/conference/c', { kind: 'begin', title: 'Conference' });
  const status = statusText(tracker.current);
  assert.equal(status?.text, '$(sync~spin) 2 runs, 1 conference');
  assert.match(status?.tooltip ?? '', /Draft scene: A\nDraft scene: B\nConference/);
  tracker.clear();
  assert.deepEqual(tracker.current, []);
});

test('step messages are shortened only when they have the server shape', () => {
  assert.equal(shortStep('[1/5] brief (planner)'), 'planner: brief 1/5');
  assert.equal(shortStep('checking the Definition of Done'), 'checking the Definition of Done');
  assert.equal(shortStep(''), undefined);
});
