import assert from 'node:assert/strict';
import { test } from 'node:test';

import { signed, wordsStatus } from '../../src/words';

test('the words line shows the scene, the manuscript, the session and today', () => {
  const status = wordsStatus({
    total: { words: 12345, target: 90000, label: '12,345 / 90,000 words (14%)' },
    session: 350,
    today: 1200,
    daily_target: 1000,
    scene: { id: 'SCN-the-gate', words: 387, target: 400, label: '387 / 400 words (97%)' },
  });
  assert.equal(status.text, '$(file) 387/400 · $(book) 12,345/90,000 · +350 this session · +1,200 of 1,000 today');
  assert.match(status.tooltip, /^SCN-the-gate: 387 \/ 400 words \(97%\)\nManuscript: 12,345/);
});

test('without targets or git history the line is shorter and the tooltip says why', () => {
  const status = wordsStatus({
    total: { words: 2281, target: null, label: '2,281 words' },
    session: -20,
    today: null,
    history_unavailable: 'not a git repository',
  });
  assert.equal(status.text, '$(book) 2,281 · −20 this session');
  assert.match(status.tooltip, /need git history: not a git repository/);
  assert.equal(signed(0), '0');
});
