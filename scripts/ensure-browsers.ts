/**
 * `npm test`'s preflight: the browsers the suites drive (scripts/browsers.ts) are here, or installed now with
 * apt-get on Debian as root, or the run stops at once with one line saying what to install.
 * ENGRAM_ENGINES=chromium skips Firefox and WebKit (and their tests) for a quick inner loop; ENGRAM_NO_INSTALL=1
 * never runs apt-get.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { missingBrowsers, selectedEngines, type Missing } from './browsers.js';

function packages(missing: Missing[]): string[] {
  return [...new Set(missing.flatMap((item) => item.apt))];
}

function canApt(): boolean {
  return !process.env.ENGRAM_NO_INSTALL && process.platform === 'linux' && existsSync('/etc/debian_version') && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
}

function aptInstall(names: string[]): boolean {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { env, stdio: 'pipe' });
    execFileSync('apt-get', ['install', '-y', '-qq', ...names], { env, stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

let engines;
try {
  engines = selectedEngines();
} catch (error) {
  console.error(`ensure-browsers: ${(error as Error).message}`);
  process.exit(1);
}

let missing = missingBrowsers(engines);
if (missing.length > 0 && canApt()) {
  console.log(`ensure-browsers: installing ${packages(missing).join(' ')} with apt-get`);
  aptInstall(packages(missing));
  missing = missingBrowsers(engines);
}
if (missing.length > 0) {
  const skip = engines.filter((engine) => !missing.some((item) => item.engine === engine));
  const chromium = missing.some((item) => item.engine === 'chromium') ? '; or `npx playwright install chromium`' : '';
  console.error(
    `ensure-browsers: missing ${missing.map((item) => item.what).join(', ')}: install ${missing.length > 1 ? 'them' : 'it'} ` +
      `(Debian: apt-get install ${packages(missing).join(' ')}${chromium})` +
      (chromium ? '' : `, or run with ENGRAM_ENGINES=${skip.join(',')}`),
  );
  process.exit(1);
}
