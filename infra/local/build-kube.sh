#!/usr/bin/env bash
# Builds a real kube-apiserver (+ kube-controller-manager) and fetches etcd, from Debian bookworm packages
# only: the `kubernetes` source package, Debian's Go 1.19 and `etcd-server`. Nothing is installed
# system-wide; binaries are cached in $DRIFTLESS_CACHE (default ~/.cache/driftless) and the build is
# skipped when they exist. Facts behind each step: ../shared/DESIGN.md, "Local stack".
set -euo pipefail

CACHE="${DRIFTLESS_CACHE:-$HOME/.cache/driftless}"
K8S_VERSION="v1.20.2"
OUT="$CACHE/bin"
APT="$CACHE/apt"
BUILD="$CACHE/build"
LOG="$CACHE/build.log"

step() { printf '\033[1m[kube-build %s] %s\033[0m\n' "$(date +%H:%M:%S)" "$*"; }
fail() {
  printf '\n[kube-build] FAILED at step: %s\n' "$CURRENT_STEP" >&2
  printf '[kube-build] last lines of %s:\n' "$LOG" >&2
  tail -n 30 "$LOG" >&2 || true
  exit 1
}
CURRENT_STEP="start"
trap fail ERR

if [[ -x "$OUT/kube-apiserver" && -x "$OUT/kube-controller-manager" && -x "$OUT/etcd" ]]; then
  step "cached binaries present in $OUT — skipping build"
  exit 0
fi

mkdir -p "$OUT" "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/dl"
: >"$LOG"

# Private apt configuration: our own sources list (with deb-src), lists and cache; nothing system-wide.
CURRENT_STEP="apt: write private sources list"
MIRROR=""
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f "$f" ]] || continue
  MIRROR=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$f")
  [[ -n "$MIRROR" ]] && break
done
if [[ -z "$MIRROR" && -f /etc/apt/sources.list ]]; then
  MIRROR=$(awk '/^deb / && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list)
fi
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$APT/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm main
deb-src [signed-by=$KEYRING] $MIRROR bookworm main
EOF
APT_OPTS=(
  -o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
  -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
  -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
)

CURRENT_STEP="apt-get update (private lists, mirror $MIRROR)"
step "$CURRENT_STEP"
apt-get "${APT_OPTS[@]}" update >>"$LOG" 2>&1

CURRENT_STEP="apt-get download (Go 1.19, etcd, reflect2, json-iterator) + kubernetes source"
step "$CURRENT_STEP"
(
  cd "$APT/dl"
  apt-get "${APT_OPTS[@]}" download golang-1.19-go golang-1.19-src etcd-server \
    golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev
  apt-get "${APT_OPTS[@]}" source --download-only kubernetes
) >>"$LOG" 2>&1

CURRENT_STEP="extract packages (dpkg-deb -x, dpkg-source -x)"
step "$CURRENT_STEP"
rm -rf "$BUILD"
mkdir -p "$BUILD/root" "$BUILD/gopath/src/k8s.io"
for deb in "$APT"/dl/*.deb; do dpkg-deb -x "$deb" "$BUILD/root"; done
DSC=$(ls "$APT"/dl/kubernetes_*.dsc | head -n 1)
dpkg-source --no-check -x "$DSC" "$BUILD/gopath/src/k8s.io/kubernetes" >>"$LOG" 2>&1
SRC="$BUILD/gopath/src/k8s.io/kubernetes"
GOCODE="$BUILD/root/usr/share/gocode/src/github.com"

# The vendored reflect2/json-iterator crash (`fatal error: fault`) on Go >= 1.18 at the first custom
# resource; Debian's newer copies fix it.
CURRENT_STEP="replace vendored reflect2 and json-iterator with Debian's"
step "$CURRENT_STEP"
rm -rf "$SRC/vendor/github.com/modern-go/reflect2" "$SRC/vendor/github.com/json-iterator/go"
cp -r "$GOCODE/modern-go/reflect2" "$SRC/vendor/github.com/modern-go/reflect2"
cp -r "$GOCODE/json-iterator/go" "$SRC/vendor/github.com/json-iterator/go"

export GOROOT="$BUILD/root/usr/lib/go-1.19"
export PATH="$GOROOT/bin:$PATH"
export GOPATH="$BUILD/gopath" GO111MODULE=off GOPROXY=off GOFLAGS="" CGO_ENABLED=0
export GOCACHE="$BUILD/gocache"
cd "$SRC"

CURRENT_STEP="build openapi-gen (vendored kube-openapi)"
step "$CURRENT_STEP"
go build -o "$BUILD/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen >>"$LOG" 2>&1

CURRENT_STEP="generate pkg/generated/openapi"
step "$CURRENT_STEP"
INPUT_DIRS=$(
  find -H . \( -path './_*' -o -path './.*' -o -path ./vendor -o -path ./debian \) -prune -o \
    -type f -name '*.go' -print |
    xargs grep -l '^// *+k8s:openapi-gen=' |
    xargs -n1 dirname | sed -e 's|^\./staging/src|vendor|' -e 's|^\./||' |
    grep -v -e '^vendor/k8s.io/code-generator' -e '^vendor/k8s.io/sample-apiserver' |
    sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -
)
"$BUILD/openapi-gen" -i "$INPUT_DIRS" -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
  -h hack/boilerplate/boilerplate.generatego.txt -r "$BUILD/openapi-violations.txt" >>"$LOG" 2>&1

PKG=k8s.io/kubernetes/vendor/k8s.io
LDFLAGS="-s -w"
for p in "$PKG/component-base/version" "$PKG/client-go/pkg/version"; do
  LDFLAGS+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=20"
  LDFLAGS+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

for cmd in kube-apiserver kube-controller-manager; do
  CURRENT_STEP="go build ./cmd/$cmd (several minutes; progress below)"
  step "$CURRENT_STEP"
  (
    while sleep 30; do
      printf '[kube-build %s]   … still compiling %s (%s packages cached so far)\n' \
        "$(date +%H:%M:%S)" "$cmd" "$(find "$GOCACHE" -name '*-d' 2>/dev/null | wc -l)"
    done
  ) &
  TICKER=$!
  if ! go build -ldflags "$LDFLAGS" -o "$OUT/$cmd.tmp" "./cmd/$cmd" >>"$LOG" 2>&1; then
    kill "$TICKER" 2>/dev/null || true
    false
  fi
  kill "$TICKER" 2>/dev/null || true
  mv "$OUT/$cmd.tmp" "$OUT/$cmd"
done

CURRENT_STEP="install etcd from etcd-server"
step "$CURRENT_STEP"
cp "$BUILD/root/usr/bin/etcd" "$OUT/etcd.tmp" && mv "$OUT/etcd.tmp" "$OUT/etcd"

CURRENT_STEP="verify binaries"
"$OUT/kube-apiserver" --version | tee -a "$LOG"
"$OUT/etcd" --version | head -n 1 | tee -a "$LOG"

CURRENT_STEP="clean build tree"
rm -rf "$BUILD"
step "done: $OUT/{kube-apiserver,kube-controller-manager,etcd}"
