/** Where the Python capture agent (native/agent/python/flagprof_agent) lives, from the bundle or the sources. */
import { existsSync } from 'node:fs';
import path from 'node:path';

const AGENT_RELATIVE = path.join('native', 'agent', 'python');

function hasAgent(root: string): boolean {
  return existsSync(path.join(root, 'flagprof_agent', '__main__.py'));
}

/** The folder to put on PYTHONPATH so `python -m flagprof_agent` finds the agent. */
export function findAgentRoot(start: string = __dirname): string {
  const fromEnv = process.env.FLAGPROF_AGENT_ROOT;
  if (fromEnv && hasAgent(fromEnv)) return path.resolve(fromEnv);
  const tried: string[] = [];
  let dir = path.resolve(start);
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, AGENT_RELATIVE);
    if (hasAgent(candidate)) return candidate;
    tried.push(candidate);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`the capture agent (flagprof_agent) is missing; looked in ${tried.join(', ')}`);
}
