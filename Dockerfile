# Production image for the API and worker processes (the same image, different commands).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx tsc -p tsconfig.json && node -e "require('./scripts/bootstrap.js').buildWeb()" && node dist/worker/workflow-bundle.js && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# The gateway's process settings (GATEWAY_NODE_FLAGS and GATEWAY_ENV in scripts/bootstrap.js; bench/README.md "Memory"
# and "The workflow sandbox").
ENV NODE_OPTIONS="--max-old-space-size=512 --max-semi-space-size=8 --require /app/dist/worker/sandbox-preload.js" MALLOC_ARENA_MAX=2
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/catalog ./catalog
COPY --from=build /app/web/dist ./web/dist
COPY package.json tsconfig.json ./
USER node
EXPOSE 8080
CMD ["node", "dist/main/api.js"]
