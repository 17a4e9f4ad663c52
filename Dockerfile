# syntax=docker/dockerfile:1
# The wallet's image: the gateway (`node src/server/main.ts`), and the worker from the same image
# (`node src/server/jobs/main.ts`). See README, "Operating" → "Deployment".
#
# Node comes from the official image; the project's own `node` package (how `npm ci` brings Node 24 to a developer's
# machine) is dropped from the image so there is one Node in it. The pages are built here, at image build time:
# the container starts the server directly, never `npm start`, whose prestart would build the pages.
ARG NODE_IMAGE=node:24-bookworm-slim

# Production dependencies only: what the final image runs with.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NODE_ENV=production npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
RUN npm ci --omit=dev \
 && rm -rf node_modules/node node_modules/.bin/node node_modules/@foundry-rs \
 && npm cache clean --force

# The Astro pages and the wallet island, built once here (astro and its integrations are production dependencies).
FROM deps AS build
COPY astro.config.mjs uno.config.ts tsconfig.json ./
COPY public ./public
COPY i18n ./i18n
COPY src ./src
RUN ASTRO_TELEMETRY_DISABLED=1 npx astro build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production APP_ENV=production HOST=0.0.0.0 PORT=4321 DATA_DIR=/var/lib/wallet \
    npm_config_update_notifier=false ASTRO_TELEMETRY_DISABLED=1
WORKDIR /app
# A user of its own (no login, no home of use); the image's files stay root's, read-only to it.
RUN groupadd --system --gid 10001 wallet \
 && useradd --system --uid 10001 --gid wallet --home-dir /var/lib/wallet --shell /usr/sbin/nologin wallet \
 && mkdir -p /var/lib/wallet && chown wallet:wallet /var/lib/wallet
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json astro.config.mjs uno.config.ts ./
COPY i18n ./i18n
COPY public ./public
COPY src ./src
COPY --from=build /app/dist ./dist
# The build is newer than every source it came from, so `npm start`'s build check (build-if-stale.ts) finds
# nothing to do if someone runs it in the container; the image's command does not run it at all.
RUN find dist -exec touch {} + && node src/server/cli/check-node.mjs
USER wallet
VOLUME ["/var/lib/wallet"]
EXPOSE 4321
# Liveness only: /api/ready (the nodes, the prices) is for load balancers, not for restarting the process.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4321)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "src/server/main.ts"]
