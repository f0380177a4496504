import assert from 'node:assert/strict';
import { test } from 'node:test';

import { llmSettings, serverSettings, withoutUnset } from '../../src/settings';

/** A reader over nested settings, as `WorkspaceConfiguration.get` reads dotted keys. */
function reader(section: Record<string, unknown>) {
  return (key: string): unknown =>
    key.split('.').reduce<unknown>((value, part) => (value as Record<string, unknown> | undefined)?.[part], section);
}

test('unset values are left out at any depth, and an emptied object with them', () => {
  assert.deepEqual(withoutUnset({ a: null, b: '', c: '  ', d: { e: null }, f: 0, g: false, h: 'x' }), {
    f: 0,
    g: false,
    h: 'x',
  });
  assert.equal(withoutUnset({ a: null }), undefined);
});

test('only the server known llm keys are sent', () => {
  const llm = llmSettings({
    provider: 'openai',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: '',
    apiKeyEnv: null,
    temperature: 0,
    maxRetries: 0,
    timeout: null,
    timeoutSecs: 30,
    agents: { critic: { model: 'qwen2.5:14b', colour: 'red' }, writer: { model: '' } },
  });
  assert.deepEqual(llm, {
    provider: 'openai',
    baseUrl: 'http://127.0.0.1:9/v1',
    temperature: 0,
    maxRetries: 0,
    agents: { critic: { model: 'qwen2.5:14b' } },
  });
});

test('nothing set means no llm section at all', () => {
  assert.equal(llmSettings({ provider: '', baseUrl: '', temperature: null, agents: {} }), undefined);
  assert.equal(llmSettings(undefined), undefined);
});

test('the section carries severity, debounce and llm as the server reads them', () => {
  const settings = serverSettings(
    reader({
      server: { path: '/somewhere/control-room' },
      trace: { server: 'off' },
      diagnostics: { severity: { 'anti-pattern': 'hint', 'name-typo': '' }, debounceMs: 40 },
      llm: { provider: 'anthropic', model: null },
    }),
  );
  assert.deepEqual(settings, {
    diagnostics: { severity: { 'anti-pattern': 'hint' }, debounceMs: 40 },
    llm: { provider: 'anthropic' },
  });
});

test('defaults alone send only the debounce', () => {
  const settings = serverSettings(reader({ diagnostics: { severity: {}, debounceMs: 150 }, llm: { provider: '' } }));
  assert.deepEqual(settings, { diagnostics: { debounceMs: 150 } });
});
