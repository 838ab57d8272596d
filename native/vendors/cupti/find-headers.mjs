// Prints the include directory holding CUPTI's headers when a CUDA toolkit is installed (for the layout
// static_asserts); prints nothing otherwise, and the tracer builds from its own mirrors alone.
import fs from 'node:fs';
import path from 'node:path';

const homes = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter(Boolean);
for (const home of homes) {
  for (const dir of [path.join(home, 'include'), path.join(home, 'extras', 'CUPTI', 'include')]) {
    if (fs.existsSync(path.join(dir, 'cupti_activity.h')) && fs.existsSync(path.join(dir, 'cuda.h'))) {
      process.stdout.write(dir);
      process.exit(0);
    }
  }
}
