#!/usr/bin/env bash
# Installs whatever Sanitas needs that is missing; quiet and quick when all is there.
# Usage: scripts/install.sh [--with-test-tools]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WITH_TEST_TOOLS=0
[ "${1:-}" = "--with-test-tools" ] && WITH_TEST_TOOLS=1

say() { echo "[install] $*"; }

# --- Debian packages -------------------------------------------------------------------
APT_PACKAGES=(bubblewrap acl python3-venv python3-dev libmagic1 fonts-dejavu-core fonts-liberation2
  libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui
  libreoffice-draw-nogui nodejs npm tesseract-ocr ffmpeg libarchive13
  mupdf-tools)
# libarchive13: 7z, RAR, tar and gzip/bzip2/xz archives are read with it in the sandbox
# (engine/archives_other.py, through libarchive-c)
# mupdf-tools: XPS/OXPS documents are converted to PDF by mutool in the sandbox (engine/xps.py)
# ffmpeg (ffprobe too): the audio and video families remux inside the sandbox (engine/media.py)
# tesseract: advanced mode's OCR text layer (SANITAS_OCR, on by default), with the language data
# of each language of SANITAS_OCR_LANGUAGES ("eng+deu" -> tesseract-ocr-eng tesseract-ocr-deu).
OCR_LANGUAGES=${SANITAS_OCR_LANGUAGES:-eng}
for lang in ${OCR_LANGUAGES//+/ }; do
  APT_PACKAGES+=("tesseract-ocr-$(echo "$lang" | tr '[:upper:]_' '[:lower:]-')")
done
# qpdf: the PDF byte scan in engine tests
# prometheus (+ promtool): the metrics tests scrape a running server and check the alert rules
# c-icap (c-icap-client) and squid: the ICAP tests drive `sanitas icap` with real clients.
# squid-openssl is Debian's Squid built with OpenSSL (it replaces the GnuTLS `squid` package):
# only that build speaks icaps:// with tls-cafile/tls-cert (docs/icap.md, TLS).
# libimage-exiftool-perl: the media tests judge outputs with exiftool
# postfix and swaks: the mail tests run a private Postfix (its own folders and loopback ports,
# `postfix -c DIR`) in front of `sanitas mail` and send with swaks; Debian's Postfix is
# installed with "No configuration" and its service kept off (nothing listens on port 25)
# sharutils (uuencode), macutils (binhex) and python3-yenc: the mail tests write files into
# text bodies with real encoders, which the cleaner must find and decode (engine/mail_inline.py)
[ "$WITH_TEST_TOOLS" = 1 ] && APT_PACKAGES+=(chromium qpdf tesseract-ocr-eng prometheus
  c-icap squid-openssl libimage-exiftool-perl postfix swaks sharutils macutils python3-yenc)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Node from another source (e.g. NodeSource) provides node and npm without Debian's packages.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<< "${missing[*]:-}"
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  say "apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  if [[ " ${missing[*]} " == *" postfix "* ]]; then
    echo "postfix postfix/main_mailer_type select No configuration" | $SUDO debconf-set-selections
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
# Debian starts the squid and c-icap services it installs: the tests run their own instances,
# so the system ones, when installed just now, must not hold ports 3128, 1344 and 25 (nor start
# at boot). A squid, c-icap or postfix installed before is left as it was.
if [ "$WITH_TEST_TOOLS" = 1 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  for pair in squid-openssl:squid c-icap:c-icap postfix:postfix; do
    pkg=${pair%%:*} svc=${pair##*:}
    [[ " ${missing[*]:-} " == *" $pkg "* ]] || continue
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
      $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
    elif [ -x "/etc/init.d/$svc" ]; then
      $SUDO "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
      $SUDO update-rc.d "$svc" disable >/dev/null 2>&1 || true
    fi
  done
fi

# --- The unprivileged user the sandbox runs the engine as ------------------------------
if [ "$(id -u)" -eq 0 ] && ! id sanitas-sandbox >/dev/null 2>&1; then
  say "creating system user sanitas-sandbox"
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
    sanitas-sandbox
fi

# --- uv and the Python environment (from Debian's python3, readable by the sandbox uid) --
UV="$ROOT/.tools/uv/bin/uv"
if [ ! -x "$UV" ]; then
  say "installing uv"
  /usr/bin/python3 -m venv "$ROOT/.tools/uv"
  "$ROOT/.tools/uv/bin/pip" install -q --disable-pip-version-check uv 2>/dev/null
fi
cd "$ROOT/backend"
# Bytecode compiled ahead: every sandbox is a fresh interpreter that cannot write .pyc files
# (read-only environment), so without it each job would compile its imports from source again.
"$UV" sync --frozen --quiet --python /usr/bin/python3 --compile-bytecode
.venv/bin/python -m compileall -q src >/dev/null
cd "$ROOT"

# --- The sandbox user must reach the Python environment (read-only) wherever the checkout
# lives; a checkout under a private home (e.g. /root, mode 700) gets a search-only ACL entry
# for that one user on each ancestor that blocks it.
if [ "$(id -u)" -eq 0 ] && id sanitas-sandbox >/dev/null 2>&1; then
  can_reach() { setpriv --reuid=sanitas-sandbox --regid=sanitas-sandbox --clear-groups -- \
                  test -r "$ROOT/backend/.venv/pyvenv.cfg" 2>/dev/null; }
  if ! can_reach; then
    dir="$ROOT"
    while [ "$dir" != "/" ]; do
      dir=$(dirname "$dir")
      setpriv --reuid=sanitas-sandbox --regid=sanitas-sandbox --clear-groups -- \
        test -x "$dir" 2>/dev/null || { say "granting sanitas-sandbox search access to $dir";
                                        setfacl -m u:sanitas-sandbox:x "$dir"; }
    done
    can_reach || echo "[install] warning: sanitas-sandbox cannot read $ROOT/backend/.venv" >&2
  fi
fi

# --- Frontend dependencies ------------------------------------------------------------
if [ -f frontend/package-lock.json ]; then
  stamp=frontend/node_modules/.install-stamp
  if [ ! -f "$stamp" ] || [ frontend/package-lock.json -nt "$stamp" ]; then
    say "npm dependencies (frontend)"
    # `npm ci` refuses a lock that lacks optional platform builds (darwin, win32, android...)
    # which a registry mirror may not carry; `npm install` installs the same locked versions.
    (cd frontend && { npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>"$ROOT/.tools/npm-ci.log" \
      || npm install --no-audit --no-fund --loglevel=error >/dev/null; })
    touch "$stamp"
  fi
fi
