// The officials' dashboard: polls the election's public status every two seconds and shows the
// intake rate measured over the last half minute. Read-only; it sends no token.
"use strict";
(() => {
  const root = document.getElementById("dashboard");
  if (!root) return;
  const M = JSON.parse(document.getElementById("messages").textContent);
  const say = (key, values) => M[key].replace(/\{(\w+)\}/g, (_, k) => String(values[k]));
  const election = root.dataset.election;
  const set = (id, text) => { document.getElementById(id).textContent = text; };
  const samples = []; // [seconds, ballots]
  const WINDOW = 30;

  async function poll() {
    try {
      const r = await fetch(`/v1/elections/${encodeURIComponent(election)}`, { headers: { Accept: "application/json" } });
      if (r.ok) {
        const s = await r.json();
        const now = performance.now() / 1000;
        const total = s.cast + s.spoiled + (s.printed || 0);
        samples.push([now, total]);
        while (samples.length > 2 && now - samples[0][0] > WINDOW) samples.shift();
        set("d-phase", M["phase." + s.phase] || s.phase);
        set("d-cast", String(s.cast));
        set("d-spoiled", String(s.spoiled));
        set("d-printed", String(s.printed || 0));
        set("d-board", String(s.head.seq + 1));
        if (samples.length >= 2) {
          const [t0, n0] = samples[0];
          const rate = (total - n0) / Math.max(now - t0, 1e-3);
          set("d-rate", say("dashboard.rate_value", { rate: rate.toFixed(1) }));
        }
        set("d-updated", say("dashboard.updated", { time: new Date().toLocaleTimeString() }));
      }
    } catch (_) {
      // the server is restarting or the network dropped: the next poll tries again
    }
    setTimeout(poll, 2000);
  }
  poll();
})();
