#!/bin/bash
# Device run 2: run1.sh's commands with .gpu/alt/ built with
# MYNS_WG_KSTEP_COMMIT 1 (each wgmma k-step a group of its own).
#   bash bench/explore/kgroup/run2.sh
exec bash "$(dirname "$0")/run1.sh"
