# syntax=docker/dockerfile:1
# Production image: the build stage installs every dependency, generates the
# Prisma client and compiles src/ (generated client included) to dist/, then
# prunes to production dependencies; the runtime stage copies only what
# `node dist/main.js` reads and runs it as the unprivileged `node` user.

ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# The Prisma schema and config come before `npm ci`: its postinstall generates the client.
COPY package.json package-lock.json prisma.config.ts ./
COPY scripts ./scripts
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# MALLOC_ARENA_MAX: two malloc arenas instead of one per thread, 20-60 MB less resident (docs/deployment.md).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    PGLITE_DIR=/app/.data/pglite \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Read at run time: dist/db/migrate.js resolves ../../prisma/migrations, i.e. /app/prisma/migrations.
COPY --from=build /app/prisma/migrations ./prisma/migrations
# The embedded database (used when DATABASE_URL is unset) lives here; a named
# volume mounted on it starts out owned by `node`, as this directory is.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
VOLUME ["/app/.data"]
EXPOSE 4000
# No curl in the slim image: Node's own fetch asks /readyz (database reachable).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/readyz',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, and shuts down gracefully (docs/operations.md).
# --max-semi-space-size=8: a young generation of 16 MB instead of 32 (docs/deployment.md#memory).
CMD ["node", "--max-semi-space-size=8", "dist/main.js"]
