/** A small hand-written SVG line chart: log-log axes, one line per series, a legend. No chart library. */

export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Horizontal dashed lines (targets). */
  marks?: { y: number; label: string }[];
}

const COLOURS = ['#d62728', '#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf'];
const WIDTH = 760;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 230, top: 40, bottom: 55 };

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Powers of ten covering [min, max], with 2 and 5 in between when the range is short. */
function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    for (const m of max / min < 1000 ? [1, 2, 5] : [1]) {
      const t = m * 10 ** e;
      if (t >= min * 0.999 && t <= max * 1.001) ticks.push(t);
    }
  }
  return ticks;
}

function formatTick(value: number): string {
  if (value >= 1000) return `${value / 1000}k`;
  return value >= 1 ? String(value) : value.toPrecision(1);
}

export function lineChart(spec: ChartSpec): string {
  const xs = spec.series.flatMap((s) => s.points.map((p) => p.x));
  const ys = [...spec.series.flatMap((s) => s.points.map((p) => p.y)), ...(spec.marks ?? []).map((m) => m.y)].filter((y) => y > 0);
  if (xs.length === 0 || ys.length === 0) return '';
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs) === xMin ? xMin * 10 : Math.max(...xs);
  const yMin = 10 ** Math.floor(Math.log10(Math.min(...ys)));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...ys)));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number) => MARGIN.left + ((Math.log10(x) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * plotW;
  const sy = (y: number) => MARGIN.top + plotH - ((Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * plotH;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="15" font-weight="600">${escape(spec.title)}</text>`,
  ];
  for (const t of logTicks(yMin, yMax)) {
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${MARGIN.left - 8}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" fill="#555">${formatTick(t)}</text>`);
  }
  for (const t of [...new Set(xs)].sort((a, b) => a - b)) {
    parts.push(`<line x1="${sx(t).toFixed(1)}" x2="${sx(t).toFixed(1)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${sx(t).toFixed(1)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle" fill="#555">${formatTick(t)}</text>`);
  }
  parts.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  parts.push(`<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escape(spec.xLabel)}</text>`);
  parts.push(`<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(spec.yLabel)}</text>`);
  for (const mark of spec.marks ?? []) {
    const y = sy(mark.y).toFixed(1);
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y}" y2="${y}" stroke="#000" stroke-dasharray="5 4"/>`);
    parts.push(`<text x="${MARGIN.left + plotW - 4}" y="${Number(y) - 5}" text-anchor="end">${escape(mark.label)}</text>`);
  }
  spec.series.forEach((series, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const points = [...series.points].sort((a, b) => a.x - b.x).filter((p) => p.y > 0);
    const path = points.map((p, j) => `${j === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2.5"/>`);
    for (const p of points) parts.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3.5" fill="${colour}"/>`);
    const ly = MARGIN.top + 10 + i * 20;
    const lx = MARGIN.left + plotW + 14;
    parts.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2.5"/>`);
    parts.push(`<text x="${lx + 28}" y="${ly + 4}">${escape(series.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
