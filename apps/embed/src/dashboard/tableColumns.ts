import type { ResultColumn } from '../api.js';
import { formatCell } from './cells.js';

/** Rows read to size the columns: a table shows the first screenful, and a longer value later is cut with an ellipsis. */
const SAMPLED_ROWS = 200;
/** The fewest characters a text column keeps before its ellipsis, when its values are longer. */
const MIN_TEXT_CH = 7;
/** A column's share of the width stops growing past this many characters (a long comment must not take the table). */
const MAX_WEIGHT_CH = 40;

/**
 * The CSS grid columns of a table widget, the same for every row (rows are virtual, each its own grid, so the template
 * cannot depend on what one row holds). Each column grows in proportion to its longest value (or title), up to
 * MAX_WEIGHT_CH; a figure never gets less than its values' width, so it is never clipped; a text column keeps at
 * least MIN_TEXT_CH characters before its ellipsis. Before, every text column shared what figures left at equal shares, and
 * at 420 px a name showed three letters while a two-digit count kept ten characters.
 *
 * @example
 * tableColumnTemplate([{ name: 'c.name', type: 'string', title: 'Name' }, { name: 'o.count', type: 'number', title: 'Orders' }], [['Matteo Rossi', 66]], 'en-US')
 * // => 'minmax(7ch, 12fr) minmax(3ch, 6fr)'
 */
export function tableColumnTemplate(columns: readonly ResultColumn[], rows: readonly unknown[][], locale: string): string {
  return columns.map((column, i) => {
    let longestValue = 0;
    for (const row of rows.slice(0, SAMPLED_ROWS)) longestValue = Math.max(longestValue, formatCell(column, row[i], locale).length);
    const longest = Math.max(longestValue, column.title.length, 1);
    // A figure keeps its values whole (its title may take an ellipsis), with one character to spare: digits are 1ch
    // wide in tabular figures, a minus sign or a wide currency symbol may not be.
    const min = column.type === 'number' ? longestValue + 1 : Math.min(longest, MIN_TEXT_CH);
    return `minmax(${min}ch, ${Math.min(longest, MAX_WEIGHT_CH)}fr)`;
  }).join(' ');
}
