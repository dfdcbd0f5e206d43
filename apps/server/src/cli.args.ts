import { parseArgs } from 'node:util';

/** One option of a command, as its help prints it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** A string option that must be given. */
  required?: boolean;
  /** The value's placeholder in the help (`--port PORT`); string options only. */
  value?: string;
  description: string;
}

/** One `svc` command: what it parses and what its `--help` prints. */
export interface CommandSpec {
  /** As typed after `svc`: `serve`, `keys create`. */
  name: string;
  summary: string;
  positionals: Array<{ name: string; description: string }>;
  options: Record<string, OptionSpec>;
  /** Printed after the options (examples, environment). */
  more?: string;
}

export type ParsedCommand =
  | { help: true }
  | { help: false; values: Record<string, string | boolean | undefined>; positionals: string[] };

/**
 * A mistake in the command line: its message is one sentence, and the caller adds where to find the command's help.
 */
export class UsageError extends Error {
  constructor(readonly command: string, message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Parses a command's arguments with node:util parseArgs, after two changes that make its answers plain:
 * `--port -1` takes `-1` as the value of `--port` (parseArgs would call it ambiguous), and every mistake is a
 * UsageError of one sentence. `--help` or `-h` anywhere asks for the help, whatever else is wrong.
 *
 * @example
 * const parsed = parseCommand(SERVE, ['--port', '8080']);
 * if (!parsed.help) console.log(parsed.values.port); // '8080'
 */
export function parseCommand(spec: CommandSpec, args: string[]): ParsedCommand {
  const end = args.indexOf('--');
  const before = end === -1 ? args : args.slice(0, end);
  if (before.includes('--help') || before.includes('-h')) return { help: true };

  const joined: string[] = [];
  for (let k = 0; k < before.length; k++) {
    const arg = before[k]!;
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    const next = before[k + 1];
    const nextIsOption = next !== undefined && next.startsWith('--') && next.slice(2).split('=')[0]! in spec.options;
    if (name !== undefined && spec.options[name]?.type === 'string' && next !== undefined) {
      if (nextIsOption) throw new UsageError(spec.name, `${arg} needs a value (${arg} ${spec.options[name].value ?? 'VALUE'})`);
      joined.push(`--${name}=${next}`);
      k++;
    } else {
      joined.push(arg);
    }
  }
  if (end !== -1) joined.push(...args.slice(end));

  const options = Object.fromEntries(Object.entries(spec.options).map(([name, option]) => [name, { type: option.type }]));
  const { values, positionals, tokens } = parseArgs({ args: joined, options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = spec.options[token.name];
    if (option === undefined) throw new UsageError(spec.name, `unknown option ${token.rawName}`);
    if (option.type === 'string' && token.value === undefined) {
      throw new UsageError(spec.name, `${token.rawName} needs a value (${token.rawName} ${option.value ?? 'VALUE'})`);
    }
    if (option.type === 'boolean' && token.inlineValue === true) throw new UsageError(spec.name, `${token.rawName} takes no value`);
  }
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.required === true && values[name] === undefined) throw new UsageError(spec.name, `--${name} ${option.value ?? 'VALUE'} is required`);
  }
  const expected = spec.positionals.map((p) => p.name);
  if (positionals.length < expected.length) {
    throw new UsageError(spec.name, `${expected.slice(positionals.length).join(' and ')} ${expected.length - positionals.length > 1 ? 'are' : 'is'} missing`);
  }
  if (positionals.length > expected.length) {
    const extra = positionals.slice(expected.length).map((p) => `"${p}"`).join(', ');
    throw new UsageError(spec.name, expected.length === 0 ? `takes no arguments, got ${extra}` : `takes ${expected.join(' ')} only, got also ${extra}`);
  }
  return { help: false, values: values as Record<string, string | boolean | undefined>, positionals };
}

/** The one-line synopsis: `svc import FILE.json [--db URL]`. */
export function synopsis(spec: CommandSpec): string {
  const options = Object.entries(spec.options).map(([name, option]) => {
    const text = `--${name}${option.type === 'string' ? ` ${option.value ?? 'VALUE'}` : ''}`;
    return option.required === true ? text : `[${text}]`;
  });
  return ['svc', spec.name, ...spec.positionals.map((p) => p.name), ...options].join(' ');
}

/** What `svc <command> --help` prints. */
export function formatHelp(spec: CommandSpec): string {
  const rows: Array<[string, string]> = [
    ...spec.positionals.map((p): [string, string] => [p.name, p.description]),
    ...Object.entries(spec.options).map(([name, option]): [string, string] => [`--${name}${option.type === 'string' ? ` ${option.value ?? 'VALUE'}` : ''}`, option.description]),
    ['-h, --help', 'print this help'],
  ];
  const width = Math.max(...rows.map(([left]) => left.length));
  const lines = [`usage: ${synopsis(spec)}`, '', spec.summary, '', ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`)];
  if (spec.more !== undefined) lines.push('', spec.more);
  return `${lines.join('\n')}\n`;
}
