'use strict';
// Summaries of repeated measurements. Every figure in the bench table is the median of several
// runs, shown with its min and max so the spread is visible next to the number.

/** Median of a list of numbers (mean of the two middle values for an even count). */
function median(values) {
  const sorted = checkedSorted(values);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** {median, min, max, n} of a non-empty list of finite numbers. */
function summarize(values) {
  const sorted = checkedSorted(values);
  return { median: median(sorted), min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

/** Rounds to a number of significant digits, so JSON lines do not carry float noise. */
function round(value, digits = 4) {
  if (!Number.isFinite(value) || value === 0) return value;
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const factor = 10 ** Math.max(0, digits - 1 - magnitude);
  return Math.round(value * factor) / factor;
}

function checkedSorted(values) {
  if (!Array.isArray(values) || values.length === 0) throw new Error('no values to summarize');
  for (const value of values) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`not a finite number: ${String(value)}`);
  }
  return [...values].sort((a, b) => a - b);
}

module.exports = { median, summarize, round };
