'use strict';
// Resident memory of another process, read from /proc (Linux). VmRSS is what the kernel
// holds in RAM for the process right now; VmHWM is its peak since start.

const fs = require('node:fs');

/** The `Vm*` lines of /proc/<pid>/status, in bytes. */
function procMemory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${name}`);
    return Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Starts VmHWM again from the current VmRSS (Linux 4.0+, `clear_refs` 5), so a peak is the peak of what follows. */
function resetPeak(pid) {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Current resident set size of `pid`, in bytes. */
function rssBytes(pid) {
  return procMemory(pid).rss;
}

const MiB = 1024 * 1024;

module.exports = { procMemory, resetPeak, rssBytes, MiB };
