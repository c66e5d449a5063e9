# umax-bot's container image: docs/DEPLOY.md (building, running, the platforms, the measured figures).
#
# Two stages on one slim Debian base. The first installs the project into a virtual environment and
# compiles the search into numba's cache; the second holds Debian's python3, that environment and the
# cache, and nothing else (no compiler, no pip, no tests, tools or docs).
#
# UMAX_BASE: debian:bookworm-slim from a registry; tools/container_check.sh makes an equivalent one from
# Debian's packages (mmdebstrap) where no registry is reachable and passes it here. Not plain BASE:
# Railway passes every service variable as a build argument of the same name, and a variable called
# BASE would replace the base image.
# Debian's python3 rather than the official python:*-slim image: bookworm's python3 is 3.11, the
# Python the project is tested on (.python-version); it gets Debian's security updates with the rest
# of the base; and one base serves both stages and both architectures (amd64, arm64).
ARG UMAX_BASE=debian:bookworm-slim

FROM ${UMAX_BASE} AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
COPY pyproject.toml README.md /src/
COPY engine /src/engine
COPY bot /src/bot
# numba, llvmlite and numpy come as wheels for linux/amd64 and linux/arm64 alike: no compiler needed.
# A pip_cert secret (a TLS proxy's certificate bundle) is used when given and never stored in a layer.
# `RUN --mount` needs BuildKit (Docker 23 and later by default, buildx, Podman/Buildah); Docker's legacy
# builder refuses the line, so Heroku's images are built on your machine (docs/DEPLOY.md, Heroku).
RUN --mount=type=secret,id=pip_cert \
    if [ -f /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
 && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check /src \
 && /opt/venv/bin/pip uninstall -y --disable-pip-version-check pip setuptools \
 && find /opt/venv -depth -type d -name tests -path '*/site-packages/*' -exec rm -rf {} +
# The search compiled now, into the cache the bot reads at every start (its log says "loaded from
# numba's cache"). NUMBA_CACHE_DIR names the cache after the source's absolute path, which is the same
# in both stages. numba also keys it on the CPU: a host whose CPU differs compiles once at start
# (5-6 s) into the same folder.
ENV NUMBA_CACHE_DIR=/var/cache/umax-bot/numba
RUN /opt/venv/bin/python -m engine compile

FROM ${UMAX_BASE}
ARG DEBIAN_FRONTEND=noninteractive
# apt-get clean: a base made with mmdebstrap keeps the downloaded packages (86 MB) where Docker's
# debian image would have dropped them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /data --shell /usr/sbin/nologin bot \
 && mkdir -p /data && chown bot:bot /data
COPY --from=build /opt/venv /opt/venv
COPY --from=build --chown=bot:bot /var/cache/umax-bot /var/cache/umax-bot
ENV PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin \
    NUMBA_CACHE_DIR=/var/cache/umax-bot/numba \
    BOT_HEALTH_FILE=/tmp/umax-bot.health \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER bot
# Records (records.directory, "games") and an optional log file (logging.path) land here; the bot
# reads /data/config.yml when no BOT_CONFIG / BOT_CONFIG_YAML is set. Mount a volume on it. (No
# VOLUME instruction: Railway refuses one, and elsewhere it leaves an anonymous volume per container.)
WORKDIR /data
# SIGTERM: the bot stops its searches at once, posts what it has, exits 0 in about a second; the
# games resume at the next start. Docker and Podman give 10 s before SIGKILL.
STOPSIGNAL SIGTERM
# Healthy while the event stream is connected and delivering (keep-alives included): bot/process/health.py.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot.process.health"]
ENTRYPOINT ["umax-bot"]
CMD ["play"]
