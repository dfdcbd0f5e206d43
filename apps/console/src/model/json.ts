import { parse, printParseErrorCode } from 'jsonc-parser';
import type { ParseError } from 'jsonc-parser';

/** The parser's error codes (by printParseErrorCode's names: its enum is a const enum) in words. */
const WORDS: Record<string, string> = {
  InvalidSymbol: 'an unexpected character',
  InvalidNumberFormat: 'a number that is not one',
  PropertyNameExpected: 'a property name (in double quotes) expected',
  ValueExpected: 'a value expected',
  ColonExpected: '":" expected',
  CommaExpected: '"," expected',
  CloseBraceExpected: '"}" expected',
  CloseBracketExpected: '"]" expected',
  EndOfFileExpected: 'nothing more expected',
  InvalidCommentToken: 'comments are not JSON',
  UnexpectedEndOfString: 'a string that does not end',
  UnexpectedEndOfComment: 'a comment that does not end',
  InvalidEscapeCharacter: 'an escape that is not one',
  InvalidCharacter: 'a character not allowed in a string',
};

/**
 * Why `text` is not strict JSON, in words with the line and column of the first problem, or undefined when it is.
 * The browser's JSON.parse does not say where in every engine; jsonc-parser (VS Code's) does, by offset.
 */
export function jsonSyntaxProblem(text: string): string | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first === undefined) return undefined;
  const before = text.slice(0, first.offset);
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `line ${line} column ${column}: ${WORDS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error)}`;
}
