# syntax=docker/dockerfile:1
# glm-ops, the Slack bot: `docker build -t glm-ops .` and see "Slack app setup" in the README for `docker run`.
# The image runs the compiled JavaScript (dist/), built here by npm ci's prepare script exactly as on a developer's
# machine; the runtime stage has no TypeScript, no dev dependencies and no sources.

# --- build: all dependencies (TypeScript too), dist/ compiled, then the dev dependencies pruned away; better-sqlite3's
# native addon is fetched prebuilt or compiled here ---
FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
RUN npm ci --no-audit --no-fund \
 && node -e "require('better-sqlite3')" \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# --- runtime: no compilers, no npm cache, not root ---
FROM node:20-bookworm-slim
# tini as PID 1: signals reach node (SIGTERM flushes the outbox) and children of a local host are reaped.
# openssh-client: `ssh -G` resolves Host aliases from the mounted ~/.ssh/config as ssh would.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates openssh-client \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY profiles ./profiles
COPY catalog ./catalog
COPY templates ./templates
COPY knowledge ./knowledge
COPY standin ./standin
COPY slack ./slack

# NODE_OPTIONS: the young-generation cap bin/glm.js's first line gives `npx glm` (see there).
# The ledger (SQLite: attempts, outbox, audit) lives on a volume: a new container picks up where the last stopped.
# Config: mount it read-only at /config/config.yaml. SSH: mount the bot's key and known_hosts read-only at
# /home/node/.ssh (the config's key_file / known_hosts point there); host keys are pinned, never learned.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=2 \
    XDG_DATA_HOME=/data \
    GLM_CONFIG=/config/config.yaml \
    GLM_HTTP_HOST=0.0.0.0
RUN mkdir -p /data /config /home/node/.ssh \
 && chown -R node:node /data /home/node/.ssh \
 && chmod 700 /home/node/.ssh
VOLUME ["/data"]
USER node

# HTTP mode receives Slack's requests here (/slack/events); both modes answer /healthz here (slack.port, default 3000).
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GLM_HEALTH_PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/glm.js", "slack"]
