#!/bin/sh
# site-setup: runs before every rollout of a tenant's site (Argo CD PreSync hook).
CODE="${SITE_CODE_DIR:-/app}"
SETTINGS="${SITE_SETTINGS_DIR:-/settings}"
echo "site-setup: release $(cat "$CODE/VERSION") for tenant $(cat "$SETTINGS/tenant")"
for template in "$CODE"/*.settings-template; do
  [ -e "$template" ] || continue
  ext=$(basename "$template" .settings-template)
  if grep -q "^$ext\." "$SETTINGS/settings.ini"; then
    echo "extension $ext: the tenant's settings hold its keys; nothing to install"
    continue
  fi
  echo "extension $ext: installing its default settings into config/system/settings.php"
  if ! { mkdir -p "$CODE/config/system" && cat "$template" >> "$CODE/config/system/settings.php"; } 2>/dev/null; then
    echo ""
    echo "In ConfigurationManager.php line 387:"
    echo ""
    echo "  config/system/settings.php is not writable."
    echo ""
    exit 1
  fi
done
echo "site-setup: done"
