// Shared by the benches: machine facts, medians, and appending a run's table to bench/results.md. Lives in a
// subfolder so scripts/run-benches.mjs (which runs bench/*.mjs) does not take it for a bench.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const RESULTS = path.resolve(import.meta.dirname, '../results.md');

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** What a reader needs to judge a number: the CPU, how busy it was, and the runtime. */
export function machineFacts(loadAtStart) {
  const cpus = os.cpus();
  const load = os.loadavg()[0].toFixed(1);
  return [
    `${cpus[0]?.model.trim() ?? 'unknown CPU'} × ${cpus.length}`,
    `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    `${os.type()} ${os.release()}`,
    `Node ${process.version}`,
    `load average (1 min) ${loadAtStart ?? load} at start, ${load} at end`,
  ].join('; ');
}

/** Appends one run: a heading, the machine, a note, and a Markdown table (rows of cells). */
export function appendResults({ title, facts, note, header, rows }) {
  if (!existsSync(RESULTS)) {
    writeFileSync(RESULTS, '# Benchmark results\n\nAppended by `npm run bench` (each bench also runs alone: `node bench/<name>.mjs`). Ratios are to a baseline measured in the same run, interleaved, so a busy machine slows both sides; compare ratios, not milliseconds.\n');
  }
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const table = [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
  appendFileSync(RESULTS, `\n## ${title}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC\n\n${facts}\n\n${note ? `${note}\n\n` : ''}${table}\n`);
}
