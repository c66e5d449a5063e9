#!/usr/bin/env bash
# Build the container image and run it as a user would (docs/DEPLOY.md): one command, a line per
# check, the figures, and exit 1 if any check failed.
#
#   tools/container_check.sh            podman if installed, else docker
#   CONTAINER_ENGINE=docker tools/container_check.sh
#   PLATFORM=linux/arm64 tools/container_check.sh   (another architecture: needs qemu's binfmt)
#   UMAX_BASE=debian:bookworm-slim IMAGE=localhost/umax-bot:check tools/container_check.sh
#
# Checked: the demo game with no network; the user is not root; a mounted config.yml and the config
# variable are read, the token comes from the environment and is never printed; the search is loaded
# from numba's cache (also on a read-only root); the health check says healthy once the bot is
# connected; `stop` (SIGTERM, SIGKILL after 10 s) during a search ends the bot with exit 0 within 10 s,
# nothing resigned or aborted; the next container resumes the game and moves in it; the log is on the
# volume. The bot's Lichess is a sandbox (bot/sandbox) in a container without a network, whose
# network namespace the bot's containers share: nothing leaves the machine.
#
# Where no image registry is reachable, the base image is made from Debian's packages with
# mmdebstrap (the script says so). Figures: build time, image size, start time to the first move,
# memory at rest and in a game (VmRSS of the bot, PID 1 of its container), the stop's seconds.
set -euo pipefail
# (a pipe into grep reads all of it: `grep -q` stops at the first match, and pipefail then fails the
# pipe on the writer's SIGPIPE)
cd "$(dirname "$0")/.."
ROOT=$PWD

ENGINE=${CONTAINER_ENGINE:-$(command -v podman >/dev/null && echo podman || echo docker)}
UMAX_BASE=${UMAX_BASE:-debian:bookworm-slim}
IMAGE=${IMAGE:-localhost/umax-bot:check}
NAME=umax-check
TOKEN=lip_containercheck
FAILED=0

say() { echo "[check] $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; FAILED=1; }
show() { grep -E "$1" | sed "s/^/[$2] /" || true; }  # pattern, prefix: lines worth seeing in the output
rss() {  # name: the bot's resident memory now and its peak (PID 1 of the container is the bot)
    $ENGINE exec "$1" sh -c 'cat /proc/1/status' \
        | awk '/^VmRSS/ {r = $2} /^VmHWM/ {h = $2} END {printf "%.0f MiB (peak %.0f MiB)", r / 1024, h / 1024}'
}

remove_containers() {  # one at a time: podman's rm of several names stops at the first that is missing
    for c in rest bot1 bot2 sandbox; do $ENGINE rm -f -t 0 "$NAME-$c" >/dev/null 2>&1 || true; done
    $ENGINE volume rm -f "$NAME-data" >/dev/null 2>&1 || true
}
cleanup() {
    remove_containers
    [[ -n "${WORK:-}" ]] && rm -rf "$WORK"
}
trap cleanup EXIT
WORK=$(mktemp -d)
remove_containers  # an earlier run killed before its own cleanup (SIGKILL skips the trap) leaves them

say "engine: $($ENGINE --version); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- the base image
image_exists() { $ENGINE image inspect "$1" >/dev/null 2>&1; }
if image_exists "$UMAX_BASE"; then
    say "base image: $UMAX_BASE (present)"
elif timeout 60 $ENGINE pull "docker.io/library/$UMAX_BASE" >/dev/null 2>&1; then
    UMAX_BASE=docker.io/library/$UMAX_BASE
    say "base image: $UMAX_BASE (pulled)"
elif image_exists "localhost/$UMAX_BASE"; then
    UMAX_BASE=localhost/$UMAX_BASE
    say "base image: $UMAX_BASE (no registry reachable; made earlier from Debian's packages with mmdebstrap)"
else
    say "no image registry reachable: making the base from Debian's packages (mmdebstrap bookworm, minbase," \
        "without docs, man pages and locales, as Docker's slim image)"
    command -v mmdebstrap >/dev/null || { fail "mmdebstrap is not installed (apt-get install mmdebstrap)"; exit 1; }
    started=$(now)
    sources=/etc/apt/sources.list.d/debian.sources
    [[ -f $sources ]] || sources=http://deb.debian.org/debian
    # merged-usr: /usr merged by a hook, not by the usrmerge package (which brings perl, ~50 MB).
    mmdebstrap --variant=minbase --format=tar --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
        bookworm "$WORK/rootfs.tar" "$sources" </dev/null >"$WORK/mmdebstrap.log" 2>&1 \
        || { tail -20 "$WORK/mmdebstrap.log"; fail "mmdebstrap"; exit 1; }
    $ENGINE import "$WORK/rootfs.tar" "localhost/$UMAX_BASE" >/dev/null 2>&1
    rm -f "$WORK/rootfs.tar"
    UMAX_BASE=localhost/$UMAX_BASE
    say "base image: $UMAX_BASE made in $(since "$started") s"
fi

# ---------------------------------------------------------------- the runtime on this machine
if [[ $ENGINE == podman && -z "${CONTAINERS_CONF:-}" ]] && ! podman run --rm --network=none "$UMAX_BASE" true \
        >/dev/null 2>&1; then
    # Some hosts refuse crun (cgroups in hybrid mode) or let no one raise rlimits, as podman's defaults do.
    printf '[engine]\nruntime = "runc"\n[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=4096:4096"]\n' \
        "$(ulimit -Hn)" "$(ulimit -Hn)" > "$WORK/containers.conf"
    export CONTAINERS_CONF=$WORK/containers.conf
    say "podman's defaults fail here (crun, rlimits): using runc and explicit ulimits ($CONTAINERS_CONF)"
fi

# ---------------------------------------------------------------- the build
build=(build -t "$IMAGE" --build-arg "UMAX_BASE=$UMAX_BASE" --network=host)
[[ $ENGINE == podman ]] && build+=(--format docker)  # OCI images drop HEALTHCHECK
[[ -n "${PLATFORM:-}" ]] && build+=(--platform "$PLATFORM")
# A TLS proxy's certificate bundle for pip, as a build secret: used by the install, kept out of the image.
[[ -n "${PIP_CERT:-}" && -f "${PIP_CERT:-}" ]] && build+=(--secret "id=pip_cert,src=$PIP_CERT")
say "$ENGINE ${build[*]} ."
started=$(now)
if ! $ENGINE "${build[@]}" . >"$WORK/build.log" 2>&1; then
    tail -30 "$WORK/build.log"; fail "the image does not build"; exit 1
fi
BUILD_S=$(since "$started")
show "engine search compiled|numba cache" build <"$WORK/build.log"
SIZE_MB=$($ENGINE image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f", $1/1e6}')
say "built $IMAGE in $BUILD_S s; size $SIZE_MB MB (uncompressed, as \`$ENGINE images\` shows it)"

nohc=()
if [[ $ENGINE == podman && ! -S /run/systemd/private ]]; then
    nohc=(--no-healthcheck)  # podman runs HEALTHCHECK from systemd timers; the check runs its command itself
    say "no systemd here for podman's health-check timers: the check runs the image's health command by exec"
fi
run=($ENGINE run --rm --network=none "${nohc[@]}")

# ---------------------------------------------------------------- the user
user=$($ENGINE image inspect --format '{{.Config.User}}' "$IMAGE")
uid=$("${run[@]}" --entrypoint id "$IMAGE" -u)
[[ $uid != 0 ]] && pass "the image runs as '$user' (uid $uid), not root" || fail "the bot runs as root"
sig=$($ENGINE image inspect --format '{{.Config.StopSignal}}' "$IMAGE")
[[ $sig == SIGTERM ]] && pass "STOPSIGNAL $sig" || fail "STOPSIGNAL is '$sig'"

# ---------------------------------------------------------------- the demo, no network
started=$(now)
if "${run[@]}" "$IMAGE" --log-level INFO >"$WORK/demo.log" 2>&1; then code=0; else code=$?; fi
demo_s=$(since "$started")
show "engine ready|^Result" demo <"$WORK/demo.log"
if [[ $code == 0 ]] && grep -q "^Result" "$WORK/demo.log" && grep -q "loaded from numba's cache" "$WORK/demo.log"
then pass "the demo game with --network=none: exit 0 in $demo_s s, the search loaded from the cache"
else tail -20 "$WORK/demo.log"; fail "the demo game (exit $code)"; fi

# ---------------------------------------------------------------- a read-only root
if "${run[@]}" --read-only --tmpfs /tmp "$IMAGE" --log-level INFO >"$WORK/ro.log" 2>&1; then code=0; else code=$?; fi
show "engine ready" read-only <"$WORK/ro.log"
if [[ $code == 0 ]] && grep -q "loaded from numba's cache" "$WORK/ro.log"
then pass "a read-only root (--read-only --tmpfs /tmp): the demo exits 0, the search loaded from the cache's copy"
else tail -20 "$WORK/ro.log"; fail "the demo on a read-only root (exit $code)"; fi

# ---------------------------------------------------------------- the settings
cat >"$WORK/config.yml" <<'EOF'
challenge:
  concurrency: 2
records:
  per: opponent
EOF
"${run[@]}" -e LICHESS_BOT_TOKEN=lip_NeverPrintThis42 -v "$WORK/config.yml:/data/config.yml:ro" "$IMAGE" \
    check-config >"$WORK/cfg.log" 2>&1 || true
head -2 "$WORK/cfg.log" | show . config
if grep -q "^# settings: config.yml\|^# settings: /data/config.yml" "$WORK/cfg.log" && grep -q "concurrency: 2" "$WORK/cfg.log" \
        && grep -q "^# token: from LICHESS_BOT_TOKEN" "$WORK/cfg.log" && ! grep -q NeverPrintThis "$WORK/cfg.log"
then pass "a config.yml mounted at /data/config.yml is read; the token from LICHESS_BOT_TOKEN, never printed"
else cat "$WORK/cfg.log"; fail "the mounted config.yml"; fi
"${run[@]}" -e BOT_CONFIG_YAML="$(printf 'challenge:\n  concurrency: 3\n')" "$IMAGE" check-config \
    >"$WORK/cfg2.log" 2>&1 || true
if grep -q "^# settings: BOT_CONFIG_YAML" "$WORK/cfg2.log" && grep -q "concurrency: 3" "$WORK/cfg2.log"
then pass "the settings from the BOT_CONFIG_YAML variable"
else cat "$WORK/cfg2.log"; fail "BOT_CONFIG_YAML"; fi

# ---------------------------------------------------------------- a game against the sandbox
$ENGINE volume create "$NAME-data" >/dev/null
$ENGINE run -d --name "$NAME-sandbox" --network=none "${nohc[@]}" \
    -v "$ROOT/tools/container_sandbox.py:/check/container_sandbox.py:ro" --entrypoint python "$IMAGE" \
    /check/container_sandbox.py --port 8080 --token "$TOKEN" --go /tmp/go >/dev/null
for _ in $(seq 100); do $ENGINE logs "$NAME-sandbox" 2>&1 | grep "sandbox ready" >/dev/null && break; sleep 0.2; done
# Long thinks (15 s a move once out of the book): the stop lands in the middle of a search.
SETTINGS=$(printf 'url: http://127.0.0.1:8080\nlogging:\n  path: bot.log\ntime:\n  fixed_movetime_ms: 15000\n')
bot() {  # name: a bot container in the sandbox's network, the token and settings from the environment
    $ENGINE run -d --name "$1" --network="container:$NAME-sandbox" -v "$NAME-data:/data" "${nohc[@]}" \
        -e LICHESS_BOT_TOKEN="$TOKEN" -e BOT_CONFIG_YAML="$SETTINGS" "$IMAGE" >/dev/null
}
healthy() {  # name, timeout: the image's own HEALTHCHECK command, until it says healthy
    local end=$((SECONDS + $2))
    while ((SECONDS < end)); do
        $ENGINE exec "$1" python -m bot.process.health >"$WORK/health" 2>&1 && return 0
        sleep 0.5
    done
    return 1
}
stop_bot() {  # name: `stop` as a platform does it (SIGTERM, SIGKILL after 10 s); sets STOP_S and EXIT
    local started; started=$(now)
    $ENGINE stop -t 10 "$1" >/dev/null
    STOP_S=$(since "$started")
    EXIT=$($ENGINE inspect --format '{{.State.ExitCode}}' "$1")
}
game() { $ENGINE logs "$NAME-sandbox" 2>/dev/null | grep " game " | tail -1 || true; }
field() { awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'; }

# At rest: connected, no game.
started=$(now)
bot "$NAME-rest"
if healthy "$NAME-rest" 90; then
    pass "health check: '$(cat "$WORK/health")' $(since "$started") s after the start"
else
    cat "$WORK/health"; fail "the health check never said healthy"
fi
sleep 5
REST_MEM=$(rss "$NAME-rest")
say "memory at rest (connected, no game): $REST_MEM (load average $(cut -d' ' -f1-3 /proc/loadavg))"
stop_bot "$NAME-rest"
[[ $EXIT == 0 ]] && pass "stop while idle: exit 0 in $STOP_S s" || fail "stop while idle: exit $EXIT in $STOP_S s"

# The challenge waits for the bot; start to the first move (a book move: no thinking).
$ENGINE exec "$NAME-sandbox" touch /tmp/go
started=$(date +%s.%N)
bot "$NAME-bot1"
for _ in $(seq 600); do [[ "$(game | field bot_moves)" -ge 1 ]] 2>/dev/null && break; sleep 0.1; done
first=$($ENGINE logs "$NAME-sandbox" 2>/dev/null | grep " bot_moves 1 " | head -1 | cut -d' ' -f1 || true)
if [[ -n $first ]]; then
    START_S=$(awk -v a="$started" -v b="$first" 'BEGIN { printf "%.2f", b - a }')
    pass "start to the first move: $START_S s (container start, cache load, tables, connect, accept, a book move;" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg))"
else
    fail "no move from the bot"; $ENGINE logs "$NAME-bot1" | tail -20
fi
$ENGINE logs "$NAME-bot1" 2>&1 | show "engine ready|hash tables ready" bot1

# Wait for a long search: two moves of ours at least, and our turn for 3 s.
mid=""
for _ in $(seq 1200); do
    line=$(game)
    if [[ "$(echo "$line" | field bot_moves)" -ge 2 && "$(echo "$line" | field bot_to_move)" == True ]]; then
        t=$(echo "$line" | cut -d' ' -f1)
        if awk -v t="$t" -v n="$(now)" 'BEGIN { exit !(n - t > 3) }'; then mid=$line; break; fi
    fi
    sleep 0.1
done
[[ -n $mid ]] || fail "the bot never got into a long search"
GAME_MEM=$(rss "$NAME-bot1")
say "memory in a game (searching): $GAME_MEM (load average $(cut -d' ' -f1-3 /proc/loadavg))"
say "stopping in the middle of a search: $mid"
before=$(echo "$mid" | field bot_moves)
stop_bot "$NAME-bot1"
GAME_STOP_S=$STOP_S GAME_EXIT=$EXIT
after=$(game)
say "the game after the stop: $after"
$ENGINE logs "$NAME-bot1" 2>&1 | show "SIGTERM|stopping its search|stopped;" bot1
if [[ $GAME_EXIT == 0 ]] && awk -v s="$GAME_STOP_S" 'BEGIN { exit !(s < 10) }' \
        && [[ "$(echo "$after" | field status)" == started && "$(echo "$after" | field resign_abort)" == 0 ]]
then pass "stop during a search: exit $GAME_EXIT in $GAME_STOP_S s; the game still running, nothing resigned or aborted"
else fail "stop during a search: exit $GAME_EXIT in $GAME_STOP_S s; $after"; fi
[[ "$(echo "$after" | field bot_moves)" -gt $before ]] \
    && pass "the stopped search's best move so far was posted" || say "no move posted at the stop"

# The next container resumes the game.
at_stop=$(echo "$after" | field bot_moves)
started=$(now)
bot "$NAME-bot2"
for _ in $(seq 600); do [[ "$(game | field bot_moves)" -gt $at_stop ]] && break; sleep 0.1; done
resumed=$(game)
if [[ "$(echo "$resumed" | field bot_moves)" -gt $at_stop ]] && $ENGINE logs "$NAME-bot2" 2>&1 | grep "resuming" >/dev/null; then
    pass "the next container resumed the game and moved in it $(since "$started") s after its start" \
        "(of which a 15 s search): $resumed"
else
    fail "the game was not resumed: $resumed"; $ENGINE logs "$NAME-bot2" 2>&1 | tail -20
fi
$ENGINE logs "$NAME-bot2" 2>&1 | show "resuming|engine ready" bot2
healthy "$NAME-bot2" 30 && pass "health check of the second container: $(cat "$WORK/health")" \
    || fail "health check of the second container: $(cat "$WORK/health")"
lines=$($ENGINE exec "$NAME-bot2" sh -c 'grep -c "logged in" /data/bot.log' || true)
[[ $lines == 3 ]] && pass "the log file on the volume holds the three containers' runs (/data/bot.log)" \
    || fail "/data/bot.log has $lines start(s), not 3"
stop_bot "$NAME-bot2"
[[ $EXIT == 0 ]] && pass "the second container's stop: exit 0 in $STOP_S s" \
    || fail "the second container's stop: exit $EXIT in $STOP_S s"

say "figures: build $BUILD_S s; image $SIZE_MB MB; start to the first move ${START_S:-?} s;" \
    "memory at rest $REST_MEM; in a game $GAME_MEM; stop in a search $GAME_STOP_S s, exit $GAME_EXIT"
if [[ $FAILED == 0 ]]; then say "all checks passed"; else say "SOME CHECKS FAILED"; fi
exit $FAILED
