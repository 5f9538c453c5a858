/**
 * PNG output of `xrate plot`: the chart's SVG rasterized by a headless Chromium found at run time
 * (`XRATE_CHROMIUM`, else `chromium`, `chromium-browser`, `google-chrome` or
 * `google-chrome-stable` on the PATH; the Debian package is `chromium`). No npm package with
 * native binaries is involved, so `npm ci` needs nothing per platform; without a browser, a PNG
 * is refused with a message saying so (an SVG needs none).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { XrateError } from '../../core/errors.js';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium executable to use, or undefined when there is none: `XRATE_CHROMIUM` when set,
 * else the first of {@link NAMES} on the PATH.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.XRATE_CHROMIUM;
  if (given) return executable(given) ? given : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const n of NAMES) {
      const p = join(dir, n);
      if (executable(p)) return p;
    }
  }
  return undefined;
}

/**
 * The PNG of an SVG document of `width` x `height` px, drawn by headless Chromium.
 *
 * @throws {@link XrateError} `unavailable` when no Chromium is found, `failed` when it fails
 */
export async function svgToPng(svg: string, width: number, height: number): Promise<Buffer> {
  const chromium = findChromium();
  if (!chromium) {
    throw new XrateError(
      'unavailable',
      'a PNG is drawn by headless Chromium, and none was found (install the "chromium" package, e.g. ' +
        '"apt-get install chromium", or set XRATE_CHROMIUM to its path); an .svg output needs none',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'xrate-plot-'));
  try {
    const svgPath = join(dir, 'chart.svg');
    const pngPath = join(dir, 'chart.png');
    writeFileSync(svgPath, svg);
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--hide-scrollbars',
      '--force-device-scale-factor=1',
      `--user-data-dir=${join(dir, 'profile')}`,
      `--window-size=${width},${height}`,
      `--screenshot=${pngPath}`,
      pathToFileURL(svgPath).href,
    ];
    await new Promise<void>((resolve, reject) => {
      execFile(chromium, args, { timeout: 60_000 }, (err, _stdout, stderr) => {
        if (err)
          reject(new XrateError('failed', `${chromium} could not draw the PNG: ${err.message}${stderr ? `\n${stderr.trim()}` : ''}`));
        else resolve();
      });
    });
    try {
      return readFileSync(pngPath);
    } catch {
      throw new XrateError('failed', `${chromium} ran but wrote no PNG`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
