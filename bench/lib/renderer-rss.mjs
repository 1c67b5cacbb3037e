// Peak memory of a Chromium run: the renderer processes' VmHWM, found under the browser's pid.
import fs from 'node:fs';

/** Peak RSS (VmHWM) of the renderer processes under `pid`. */
export function rendererPeakRss(pid) {
  const children = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch { /* the process ended */ }
  }
  let peak = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    for (const c of children.get(p) ?? []) {
      stack.push(c);
      try {
        if (!fs.readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('--type=renderer')) continue;
        const hwm = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync(`/proc/${c}/status`, 'utf8'));
        if (hwm) peak = Math.max(peak, Number(hwm[1]) * 1024);
      } catch { /* ended */ }
    }
  }
  return peak || null;
}
