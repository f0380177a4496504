/**
 * The `controlRoom` settings as the server reads them: sent in
 * `initializationOptions` and again on every change.
 *
 * VS Code reports every declared setting, set or not, so unset values (null,
 * empty text) are left out here; and the server refuses keys it does not
 * know under `llm`, so only its keys are sent. Nothing here imports `vscode`,
 * so the rules can be tested on their own.
 */

/** The keys of the server's `[llm]` layer that the editor can set. */
export const LLM_KEYS = [
  'provider',
  'baseUrl',
  'model',
  'apiKeyEnv',
  'temperature',
  'maxTokens',
  'timeout',
  'maxRetries',
] as const;

export type LlmKey = (typeof LLM_KEYS)[number];

/** One layer of model settings: the `LLM_KEYS`, and per-agent layers. */
export interface LlmSettings {
  [key: string]: unknown;
  agents?: Record<string, Record<string, unknown>>;
}

/** What the server reads under `controlRoom`. */
export interface ServerSettings {
  diagnostics?: {
    severity?: Record<string, string>;
    debounceMs?: number;
  };
  llm?: LlmSettings;
}

/** Reads one setting, as `vscode.WorkspaceConfiguration.get` does. */
export type SettingReader = (key: string) => unknown;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `value` without its unset members (null, undefined, blank text), at any
 * depth; an object left empty is itself unset (`undefined`).
 */
export function withoutUnset(value: unknown): unknown {
  if (value === null || value === undefined) {
    return undefined;
  }
  if (typeof value === 'string') {
    return value.trim() === '' ? undefined : value;
  }
  if (Array.isArray(value)) {
    return value.map(withoutUnset).filter((item) => item !== undefined);
  }
  if (isRecord(value)) {
    const kept: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const cleaned = withoutUnset(member);
      if (cleaned !== undefined) {
        kept[key] = cleaned;
      }
    }
    return Object.keys(kept).length > 0 ? kept : undefined;
  }
  return value;
}

/** The known keys of one layer, unset ones left out. */
function pickLlmKeys(layer: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of LLM_KEYS) {
    const value = withoutUnset(layer[key]);
    if (value !== undefined) {
      picked[key] = value;
    }
  }
  return picked;
}

/**
 * The `controlRoom.llm` object as the server should get it, or `undefined`
 * when nothing is set. Agent names are passed on as written, so the server
 * can name a misspelt one in its message.
 */
export function llmSettings(raw: unknown): LlmSettings | undefined {
  if (!isRecord(raw)) {
    return undefined;
  }
  const layer: LlmSettings = pickLlmKeys(raw);
  if (isRecord(raw.agents)) {
    const agents: Record<string, Record<string, unknown>> = {};
    for (const [name, agent] of Object.entries(raw.agents)) {
      if (isRecord(agent)) {
        const picked = pickLlmKeys(agent);
        if (Object.keys(picked).length > 0) {
          agents[name] = picked;
        }
      }
    }
    if (Object.keys(agents).length > 0) {
      layer.agents = agents;
    }
  }
  return Object.keys(layer).length > 0 ? layer : undefined;
}

/** The severity overrides, unset entries left out. */
function severitySettings(raw: unknown): Record<string, string> | undefined {
  if (!isRecord(raw)) {
    return undefined;
  }
  const severity: Record<string, string> = {};
  for (const [code, level] of Object.entries(raw)) {
    if (typeof level === 'string' && level.trim() !== '') {
      severity[code] = level.trim();
    }
  }
  return Object.keys(severity).length > 0 ? severity : undefined;
}

/** The `controlRoom` section for the server, read through `get`. */
export function serverSettings(get: SettingReader): ServerSettings {
  const settings: ServerSettings = {};
  const severity = severitySettings(get('diagnostics.severity'));
  const debounce = get('diagnostics.debounceMs');
  if (severity !== undefined || typeof debounce === 'number') {
    settings.diagnostics = {};
    if (severity !== undefined) {
      settings.diagnostics.severity = severity;
    }
    if (typeof debounce === 'number') {
      settings.diagnostics.debounceMs = debounce;
    }
  }
  const llm = llmSettings(get('llm'));
  if (llm !== undefined) {
    settings.llm = llm;
  }
  return settings;
}
