// The dashboard's one HTML page: the styles and the mount point of the page script (ui/app.ts).

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kruise dashboard</title>
<style>
  :root { --fg: #1f2933; --muted: #616e7c; --line: #d9e2ec; --bg: #f5f7fa; --card: #fff; --accent: #2f6fdf;
          --ok: #2f9e44; --warn: #e8590c; --old: #868e96; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: #102a43; color: #fff; }
  header h1 { font-size: 17px; margin: 0; font-weight: 600; }
  header a { color: #fff; text-decoration: none; }
  header .live { margin-left: auto; font-size: 12px; display: flex; align-items: center; gap: 6px; }
  header .dot { width: 9px; height: 9px; border-radius: 50%; background: var(--old); }
  header .dot.on { background: #51cf66; }
  main { padding: 18px 20px; max-width: 1280px; margin: 0 auto; }
  h2 { font-size: 16px; margin: 18px 0 8px; }
  h3 { font-size: 14px; margin: 0 0 6px; }
  table { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
  th { font-size: 12px; color: var(--muted); font-weight: 600; background: #f0f4f8; }
  tr.row { cursor: pointer; }
  tr.row:hover { background: #eef4ff; }
  .bar { position: relative; width: 180px; height: 14px; background: #e4e7eb; border-radius: 7px; overflow: hidden; display: inline-block; vertical-align: middle; }
  .bar > span { position: absolute; inset: 0 auto 0 0; background: var(--accent); }
  .bar.done > span { background: var(--ok); }
  .num { font-variant-numeric: tabular-nums; color: var(--muted); margin-left: 8px; font-size: 12px; }
  .tag { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; background: #e4e7eb; color: var(--fg); }
  .tag.update { background: #d0ebff; color: #1864ab; }
  .tag.paused { background: #fff3bf; color: #7c5800; }
  .tag.warn { background: #ffe8cc; color: var(--warn); }
  .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; margin: 10px 0; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
  .card .big { font-size: 22px; font-weight: 600; }
  .card .sub { color: var(--muted); font-size: 12px; }
  .groups { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
  .group { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px; }
  .group.update { border-color: #74c0fc; }
  .group table { border: 0; }
  .ready { color: var(--ok); font-weight: 600; }
  .notready { color: var(--warn); font-weight: 600; }
  form.plan { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px; }
  form.plan label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
  form.plan input { font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; min-width: 90px; }
  button { font: inherit; padding: 5px 14px; border: 0; border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
  .end { margin: 8px 0; padding: 8px 10px; border-left: 4px solid var(--accent); background: #eef4ff; }
  .error { color: #c92a2a; }
  pre { background: #102a43; color: #d9e2ec; padding: 10px; border-radius: 6px; overflow: auto; font-size: 12px; }
  .muted { color: var(--muted); }
</style>
</head>
<body>
<div id="app"></div>
<script type="module" src="/app.js"></script>
</body>
</html>
`;
