/**
 * Colours for the canvas, read from VS Code's --vscode-* variables (the report page defines the same variables
 * for light and dark), re-read when the theme changes. Slice colours come from a fixed palette whose lightness
 * follows the theme; high contrast themes outline every slice with the contrast border.
 */
export interface Theme {
  kind: 'light' | 'dark' | 'high-contrast';
  background: string;
  foreground: string;
  muted: string;
  border: string;
  grid: string;
  headerBackground: string;
  selection: string;
  focus: string;
  match: string;
  flow: string;
  flowSelected: string;
  contrastBorder: string | undefined;
  font: string;
  /** Slice fills and the text colour that reads on each. */
  palette: string[];
  paletteText: string[];
  mergedFill: string;
}

const HUES = [210, 145, 30, 280, 0, 185, 55, 320, 100, 240, 15, 165, 260, 75, 340, 120];

function variable(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const value = style.getPropertyValue(name).trim();
  return value || fallback;
}

export function readTheme(): Theme {
  const body = document.body;
  const kind =
    body.classList.contains('vscode-high-contrast') || body.classList.contains('vscode-high-contrast-light')
      ? 'high-contrast'
      : body.classList.contains('vscode-light')
        ? 'light'
        : body.classList.contains('vscode-dark')
          ? 'dark'
          : window.matchMedia?.('(prefers-color-scheme: dark)').matches
            ? 'dark'
            : 'light';
  const style = getComputedStyle(document.documentElement);
  const dark = kind !== 'light' && !body.classList.contains('vscode-high-contrast-light');
  const palette = HUES.map((h) => (dark ? `hsl(${h} 45% 42%)` : `hsl(${h} 60% 72%)`));
  const paletteText = HUES.map(() => (dark ? '#ffffff' : '#000000'));
  const family = variable(style, '--vscode-font-family', 'system-ui, sans-serif');
  const contrastBorder =
    kind === 'high-contrast' ? variable(style, '--vscode-contrastBorder', '#6fc3df') : undefined;
  return {
    kind,
    background: variable(style, '--vscode-editor-background', dark ? '#1e1e1e' : '#ffffff'),
    foreground: variable(style, '--vscode-editor-foreground', dark ? '#d4d4d4' : '#1f1f1f'),
    muted: variable(style, '--vscode-descriptionForeground', dark ? '#9d9d9d' : '#616161'),
    border: variable(style, '--vscode-panel-border', dark ? '#3c3c3c' : '#e5e5e5'),
    grid: variable(style, '--vscode-editorIndentGuide-background1', dark ? '#333333' : '#ececec'),
    headerBackground: variable(style, '--vscode-sideBar-background', dark ? '#252526' : '#f3f3f3'),
    selection: variable(style, '--vscode-editorCursor-foreground', dark ? '#ffffff' : '#000000'),
    focus: variable(style, '--vscode-focusBorder', '#0090f1'),
    match: variable(style, '--vscode-editor-findMatchBorder', '#f2cc60'),
    flow: variable(style, '--vscode-charts-foreground', dark ? '#cccccc' : '#444444'),
    flowSelected: variable(style, '--vscode-charts-orange', '#d18616'),
    contrastBorder,
    font: `11px ${family}`,
    palette,
    paletteText,
    mergedFill: dark ? 'hsl(220 8% 45%)' : 'hsl(220 8% 70%)',
  };
}

/** A stable palette index per name (FNV-1a), so one op keeps its colour everywhere. */
export function colourIndex(name: string, paletteSize: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % paletteSize;
}

/** The theme's colours as RGBA pixels (little-endian ABGR words), for painting into an ImageData. */
export interface ThemePixels {
  background: number;
  header: number;
  grid: number;
  palette: Uint32Array;
}

let resolvedPixels: { theme: Theme; pixels: ThemePixels } | undefined;

/** The theme's colours as pixels, resolved by a canvas itself (any CSS colour syntax), once per theme read. */
export function themePixels(theme: Theme): ThemePixels {
  if (resolvedPixels?.theme === theme) return resolvedPixels.pixels;
  const probe = document.createElement('canvas');
  probe.width = 1;
  probe.height = 1;
  const ctx = probe.getContext('2d', { willReadFrequently: true })!;
  const resolve = (css: string): number => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#000';
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
    return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  };
  const pixels = {
    background: resolve(theme.background),
    header: resolve(theme.headerBackground),
    grid: resolve(theme.grid),
    palette: Uint32Array.from(theme.palette.map(resolve)),
  };
  resolvedPixels = { theme, pixels };
  return pixels;
}
