#!/usr/bin/env bash
# System libraries the Python stack needs but pip cannot provide:
#  - FFmpeg shared libraries for torchcodec (datasets.Audio/Video decoding)
#  - espeak-ng, which speaks real test sentences for the voice metrics' tests
#  - Chromium, which the Space's browser test drives through Playwright
#  - a CJK font (WenQuanYi Micro Hei, 1.6 MB; fonts-noto-cjk is 57 MB) so the test browser draws the
#    explorer's Mandarin prompts and transcripts (hug_vis_dataset/space/style.py names it in the font stack)
# Installs them with apt when running as root on Debian/Ubuntu; otherwise says what is missing.
set -u
missing=()
have_lib() { ldconfig -p 2>/dev/null | grep -q "$1"; }
have_lib libavutil.so || missing+=(ffmpeg)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fc-list :lang=zh family 2>/dev/null | grep -q . || missing+=(fonts-wqy-microhei)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null && exit 0
  echo "setup: apt-get failed for ${missing[*]}" >&2
fi
cat >&2 <<MSG
setup: these system packages are missing: ${missing[*]}
  Debian/Ubuntu: sudo apt-get install ${missing[*]}
  (ffmpeg is required for datasets' Audio/Video decoding; espeak-ng, chromium and fonts-wqy-microhei only for some tests,
   which then skip with this reason.)
MSG
# Only FFmpeg is required to work at all.
case " ${missing[*]} " in *" ffmpeg "*) exit 1;; esac
exit 0
