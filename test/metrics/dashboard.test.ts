// The example Grafana dashboard and scrape config (monitoring/) query only metrics that exist: the bot's (served by
// src/metrics/bot.ts) and SGLang's (read by src/lifecycle/sglang-metrics.ts, served by the stand-in).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/package-root.ts';

const read = (p: string) => readFileSync(join(PACKAGE_ROOT, p), 'utf8');

describe('monitoring examples', () => {
  it('the dashboard is valid JSON whose queries name metrics the bot or SGLang serve', () => {
    const d = JSON.parse(read('monitoring/grafana-dashboard.json')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const served = `${read('src/metrics/bot.ts')}\n${read('src/lifecycle/sglang-metrics.ts')}\n${read('standin/http.mjs')}`;
    const names = d.panels.flatMap((p) =>
      p.targets.flatMap((t) => t.expr.match(/\b(?:glm|sglang:)[a-z_:]+(?=\{)/g) ?? []),
    );
    expect(names.length).toBeGreaterThan(10);
    for (const n of new Set(names)) {
      const base = n.replace(/_(bucket|sum|count)$/, '');
      expect(served, n).toContain(base);
    }
    expect(read('README.md')).toContain('monitoring/grafana-dashboard.json');
  });

  it('the scrape config has the bot and SGLang jobs the dashboard filters on', () => {
    const c = parse(read('monitoring/prometheus.yml')) as { scrape_configs: Array<{ job_name: string }> };
    expect(c.scrape_configs.map((s) => s.job_name)).toEqual(['glm-ops', 'sglang']);
    // The README shows the same scrape config (fenced as yml: it is Prometheus's file, not the bot's config).
    const block = /```yml\n(scrape_configs:[\s\S]*?)```/.exec(read('README.md'))?.[1];
    expect(read('monitoring/prometheus.yml')).toContain(block!);
  });
});
