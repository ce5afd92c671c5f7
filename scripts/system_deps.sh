#!/usr/bin/env bash
# Install the Debian packages the tests use: docker-registry (the real OCI registry that
# tests/support/registry.py starts on 127.0.0.1).
#
# A no-op when /usr/bin/docker-registry is already there. The package's own service is kept
# from starting (a temporary policy-rc.d that denies every start): the tests run their own
# registry process with their own configuration and port, so the system service plays no part.
# Runs unattended (CI=true, no stdin); needs root, or sudo without a password.
set -euo pipefail

if [[ -x /usr/bin/docker-registry ]]; then
    echo "docker-registry is installed"
    exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        echo "system_deps.sh: need root (or sudo) to install docker-registry" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive

POLICY=/usr/sbin/policy-rc.d
made_policy=0
if [[ ! -e $POLICY ]]; then
    # Exit code 101 = "action forbidden": invoke-rc.d then starts no service.
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$POLICY" >/dev/null
    "${SUDO[@]}" chmod 755 "$POLICY"
    made_policy=1
fi
cleanup() {
    if [[ $made_policy -eq 1 ]]; then
        "${SUDO[@]}" rm -f "$POLICY"
    fi
}
trap cleanup EXIT

echo "installing docker-registry (Debian)"
"${SUDO[@]}" apt-get update -qq </dev/null
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends docker-registry </dev/null

if [[ ! -x /usr/bin/docker-registry ]]; then
    echo "system_deps.sh: /usr/bin/docker-registry is missing after the install" >&2
    exit 1
fi
/usr/bin/docker-registry --version
