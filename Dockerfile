# syntax=docker/dockerfile:1
# Coworker: multi-stage build. The build stage compiles TypeScript and prunes dev dependencies;
# the runtime stage is node:20-slim running as the unprivileged `node` user, with the data
# directory and the agent's workspace as volumes.

FROM node:20-slim AS build
WORKDIR /app
# Toolchain for native modules (better-sqlite3) in case no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
# `npm ci` builds dist/ through the package's `prepare` script.
RUN npm ci && npm prune --omit=dev

FROM node:20-slim
# tini reaps the agent's command subprocesses and forwards SIGTERM; git, ripgrep and bash are
# what the agent's tools use in the workspace.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini git ripgrep ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    COWORKER_DATA_DIR=/data \
    COWORKER_WORKSPACE=/workspace
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config/coworker.example.yaml ./config/coworker.example.yaml
# Inside a container the ops server must listen on all interfaces for health probes. Mount your
# own file and set COWORKER_CONFIG to replace this one (keep `ops.host: 0.0.0.0` in it).
RUN printf 'ops:\n  host: 0.0.0.0\n  port: 8080\n' > ./config/coworker.yaml \
 && mkdir -p /data /workspace \
 && chown node:node /data /workspace
USER node
VOLUME ["/data", "/workspace"]
EXPOSE 8080
# The probe reads the configuration as `start` does (COWORKER_CONFIG, the file above, .env,
# COWORKER_OPS_PORT), so it asks the ops port a mounted config file sets.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "dist/cli.js", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/cli.js"]
CMD ["start"]
