// Entry point of the `python` shim: understands just enough of the Python command line for the bot.
//   python -m sglang.launch_server <flags>   the simulated server (server.mjs)
//   python -m sglang.check_env               environment report (check_env.mjs)
//   python -c '<code mentioning sglang.__version__>'
//   python -c '<the bot's runpy bootstrap>' MODULE ARGS...   as -m MODULE, @glm-env:NAME arguments from the env
//   python --version | -V                    Python 3.12.3

import { writeErr, writeOut } from './log.mjs';
import { flavor, version } from './version.mjs';

const PY_VERSION = 'Python 3.12.3';

async function main(argv) {
  let i = 0;
  // Interpreter options that do not change what we do.
  while (i < argv.length && /^-[uBOEsIqS]+$/.test(argv[i])) i++;
  const a = argv[i];
  if (a === undefined) {
    writeErr('sglang stand-in: interactive Python is not simulated; use -m, -c or --version\n');
    return 1;
  }
  if (a === '--version' || a === '-V') {
    writeOut(`${PY_VERSION}\n`);
    return 0;
  }
  if (a === '-m') {
    const mod = argv[i + 1];
    const rest = argv.slice(i + 2);
    if (mod === 'sglang.launch_server') {
      const { launchServer } = await import('./server.mjs');
      await launchServer(rest);
      return null;
    }
    if (mod === 'sglang.check_env') {
      const { checkEnv } = await import('./check_env.mjs');
      await checkEnv(version(), flavor());
      return 0;
    }
    if (mod === undefined) {
      writeErr('Argument expected for the -m option\n');
      return 2;
    }
    writeErr(`/usr/bin/python3: No module named ${mod}\n`);
    return 1;
  }
  if (a === '-c') {
    const code = argv[i + 1] ?? '';
    // The bot's bootstrap for secret arguments (src/profiles/secrets.ts, BOOT): `@glm-env:NAME` arguments take the
    // value of NAME from the environment (and remove it there), then the module runs as with -m.
    if (/runpy\.run_module\(sys\.argv\[0\]/.test(code) && argv[i + 2]) {
      const rest = argv.slice(i + 3).map((x) => {
        if (!x.startsWith('@glm-env:')) return x;
        const name = x.slice('@glm-env:'.length);
        const v = process.env[name] ?? '';
        delete process.env[name];
        return v;
      });
      return main(['-m', argv[i + 2], ...rest]);
    }
    if (/sglang\.__version__/.test(code)) {
      writeOut(`${version()}\n`);
      return 0;
    }
    if (/torch\.__version__/.test(code)) {
      writeOut('2.9.1+cu128\n');
      return 0;
    }
    if (/torch\.cuda\.device_count\(\)/.test(code)) {
      writeOut(`${process.env.STANDIN_NUM_GPUS ?? 8}\n`);
      return 0;
    }
    writeErr(
      'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n' +
        "NotImplementedError: the SGLang stand-in's python only runs snippets that print sglang.__version__\n",
    );
    return 1;
  }
  if (a.startsWith('-')) {
    writeErr(
      `Unknown option: ${a}\nusage: /usr/bin/python3 [option] ... [-c cmd | -m mod | file | -] [arg] ...\nTry \`python -h' for more information.\n`,
    );
    return 2;
  }
  writeErr(`/usr/bin/python3: can't open file '${a}': [Errno 2] No such file or directory\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exitCode = code;
  },
  (e) => {
    writeErr(`sglang stand-in internal error: ${e?.stack ?? e}\n`);
    process.exit(70);
  },
);
