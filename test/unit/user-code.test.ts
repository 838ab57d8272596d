import { describe, expect, it } from 'vitest';
import { isUserFile } from '../../extension/import/userCode';

describe("which files are the user's own", () => {
  it('leaves out installed packages, the standard library, torch and the agent', () => {
    for (const file of [
      '/usr/lib/python3.11/threading.py',
      '/venv/lib/python3.11/site-packages/transformers/models/bert/modeling_bert.py',
      'torch/nn/modules/module.py',
      '/opt/flagprof/native/agent/python/flagprof_agent/__main__.py',
      '<frozen runpy>',
      '<string>',
    ])
      expect(isUserFile(file), file).toBe(false);
  });
  it('leaves out the standard library as torch names it, relative to its sys.path prefix', () => {
    for (const file of [
      'multiprocessing/process.py',
      'concurrent/futures/thread.py',
      'threading.py',
      'runpy.py',
    ])
      expect(isUserFile(file), file).toBe(false);
  });
  it("keeps the user's files, relative or absolute, even when named like a standard module", () => {
    for (const file of ['train.py', 'profile.py', 'code.py', 'models/gpt.py', '/home/user/proj/train.py'])
      expect(isUserFile(file), file).toBe(true);
  });
});
