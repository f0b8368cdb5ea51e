"""The fonts every PDF of the system is set in, embedded so each viewer shows it as printed.

The 14 standard PDF fonts (Helvetica, Courier...) are not embedded: a viewer
substitutes what it has, and an accented hall name or a wide figure may come out
differently from what was signed.  The Bitstream Vera faces that reportlab ships are
registered as TrueType fonts instead; reportlab embeds the subset of glyphs a
document uses, so the file alone says how it looks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import reportlab
from reportlab import rl_config
from reportlab.graphics import shapes
from reportlab.lib.styles import StyleSheet1, getSampleStyleSheet
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

SANS = "ReportSans"
SANS_BOLD = "ReportSans-Bold"
SANS_ITALIC = "ReportSans-Italic"
SANS_BOLD_ITALIC = "ReportSans-BoldItalic"
_FILES = {SANS: "Vera.ttf", SANS_BOLD: "VeraBd.ttf", SANS_ITALIC: "VeraIt.ttf", SANS_BOLD_ITALIC: "VeraBI.ttf"}
FONT_FOLDER = Path(reportlab.__file__).parent / "fonts"


def register() -> None:
    """Register the embedded fonts with reportlab (once; later calls do nothing)."""
    known = set(pdfmetrics.getRegisteredFontNames())
    for name, file in _FILES.items():
        if name not in known:
            pdfmetrics.registerFont(TTFont(name, str(FONT_FOLDER / file)))
    pdfmetrics.registerFontFamily(SANS, normal=SANS, bold=SANS_BOLD, italic=SANS_ITALIC, boldItalic=SANS_BOLD_ITALIC)
    # A canvas starts in its base font and names it in every page's resources, used or
    # not: it must be an embedded one too.
    rl_config.canvas_basefontname = SANS
    shapes.STATE_DEFAULTS["fontName"] = SANS  # drawings (the tickets' QR codes) likewise


def style_sheet() -> StyleSheet1:
    """reportlab's sample styles, every one set in the embedded fonts."""
    register()
    sheet = getSampleStyleSheet()
    for style in sheet.byName.values():
        style_any: Any = style
        name = getattr(style_any, "fontName", None)
        if name is None:
            continue
        bold = "Bold" in name
        italic = "Italic" in name or "Oblique" in name
        style_any.fontName = {(False, False): SANS, (True, False): SANS_BOLD, (False, True): SANS_ITALIC,
                              (True, True): SANS_BOLD_ITALIC}[(bold, italic)]
    return sheet
