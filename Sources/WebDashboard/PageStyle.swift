/// The stylesheet of the dashboard (served as /style.css) and of the report (inlined), with a
/// print stylesheet for A4 and Letter.
public enum PageStyle {
    public static let css = """
        :root { color-scheme: light; --ink: #1d232a; --muted: #5b6570; --line: #c9d1d9; --accent: #0b62a4; }
        * { box-sizing: border-box; }
        body { font: 15px/1.45 system-ui, sans-serif; color: var(--ink); margin: 0 auto; max-width: 960px; padding: 0 16px 48px; }
        header.top { display: flex; gap: 16px; align-items: baseline; border-bottom: 1px solid var(--line); margin-bottom: 16px; }
        header.top nav a { margin-right: 12px; }
        a { color: var(--accent); }
        h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 32px; border-bottom: 1px solid var(--line); }
        .numbers { display: flex; flex-wrap: wrap; gap: 12px; }
        .number { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 180px; }
        .number .value { font-size: 1.6em; font-weight: 600; }
        .number .label, .muted { color: var(--muted); }
        .battery.low { color: #b00020; font-weight: 600; }
        figure.chart { margin: 16px 0; }
        figcaption { font-weight: 600; }
        .chart-svg { width: 100%; height: auto; max-height: 320px; }
        .chart-svg .axis { stroke: var(--ink); stroke-width: 1; }
        .chart-svg .grid { stroke: var(--line); stroke-width: 0.5; }
        .chart-svg text { font-size: 11px; fill: var(--ink); }
        .chart-svg .axis-label { font-size: 12px; font-weight: 600; }
        .chart-svg .line { fill: none; stroke-width: 1.8; }
        .chart-svg .series-0 { fill: #0b62a4; stroke: #0b62a4; }
        .chart-svg .series-1 { fill: #c2410c; stroke: #c2410c; }
        .chart-svg .series-2 { fill: #15803d; stroke: #15803d; }
        .chart-svg .series-3 { fill: #7c3aed; stroke: #7c3aed; }
        .chart-svg path.line { fill: none; }
        .chart-svg .band { stroke: none; opacity: 0.25; }
        .chart-svg .band-normal { fill: #22c55e; } .chart-svg .band-elevated { fill: #facc15; }
        .chart-svg .band-stage1 { fill: #fb923c; } .chart-svg .band-stage2 { fill: #ef4444; } .chart-svg .band-crisis { fill: #7f1d1d; }
        .chart-svg .band-label { font-size: 9px; fill: var(--muted); }
        table { border-collapse: collapse; margin: 8px 0; font-size: 0.9em; }
        th, td { border: 1px solid var(--line); padding: 2px 8px; text-align: right; }
        th[scope=row], thead th { text-align: left; }
        caption { text-align: left; color: var(--muted); }
        table.data { max-height: 240px; }
        details.table summary { cursor: pointer; color: var(--muted); }
        form.inline { display: inline; }
        button { font: inherit; padding: 2px 10px; }
        .error { color: #b91c1c; }
        @media print {
          details.table > summary { display: none; }
          @page { margin: 15mm; }  /* the paper size (A4 or Letter) is the printer's */
          body { max-width: none; font-size: 11pt; padding: 0; }
          header.top nav, form, button { display: none; }
          h2 { break-after: avoid; }
          figure.chart, table { break-inside: avoid; }
          a { color: inherit; text-decoration: none; }
        }
        """
}
