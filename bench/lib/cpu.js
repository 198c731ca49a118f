'use strict';
// CPU time of another process from /proc/<pid>/stat (utime + stime), to tell whether a run
// was limited by the server (near one core busy) or by something else.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

let ticksPerSecond;
function clockTicks() {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds `pid` has used so far (all its threads). */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields after it are space-separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, i.e. 11 and 12 after the name.
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}

/** Runs `work` and returns its result with the CPU seconds `pid` used meanwhile. */
async function measureCpu(pid, work) {
  const before = cpuSeconds(pid);
  const result = await work();
  return { result, cpuSeconds: cpuSeconds(pid) - before };
}

module.exports = { cpuSeconds, measureCpu, clockTicks };
