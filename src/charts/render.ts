// SVG to PNG with resvg (a maintained renderer; prebuilt binaries come from the npm registry) and a bundled open
// font, DejaVu Sans from the dejavu-fonts-ttf package: the same glyphs on every machine, no system fonts consulted.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** DejaVu Sans (regular and bold), found through the package that ships it. */
export const FONT_FILES = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((f) =>
  join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', f),
);
export const FONT_FAMILY = 'DejaVu Sans';

/** Renders an SVG document to PNG at its own size. resvg is loaded here, on the first chart, not at start-up. */
export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  const r = new Resvg(svg, {
    font: { fontFiles: FONT_FILES, loadSystemFonts: false, defaultFontFamily: FONT_FAMILY },
    fitTo: { mode: 'original' },
    background: 'white',
  });
  return r.render().asPng();
}
