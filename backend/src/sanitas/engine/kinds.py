"""Every kind of finding the engine records, declared once with the policy rule that decides it.

`Context.add` looks each kind up here: a kind that belongs to a rule whose action is `refuse`
refuses the file (`refusal`), and a kind that is not declared at all is a programming error the
tests catch (`UNDECLARED` collects them; the engine tests fail when it is not empty). Kinds no
policy decides (the file's structure, repairs, encodings, conversions, parts that are never
kept because nothing displays them) are declared with None.

A few kinds are shared by two rules (an XMP packet is document metadata in a PDF and picture
metadata in a photo): they are declared with both, the first is the default and the recorder
names the other (`Context.add(..., rule=...)`).
"""

from __future__ import annotations

from sanitas.engine.policy import Rule

_MACROS = Rule.MACROS
_JS = Rule.JAVASCRIPT
_EMBEDDED = Rule.EMBEDDED_FILES
_EXTERNAL = Rule.EXTERNAL_REFERENCES
_LINKS = Rule.HYPERLINKS
_REVIEW = Rule.REVIEW_DATA
_META = Rule.DOCUMENT_METADATA
_IMAGE_META = Rule.IMAGE_METADATA
_HIDDEN = Rule.HIDDEN_CONTENT
_FORMS = Rule.FORM_FIELDS
_COVER = Rule.COVER_ART
_CHAPTERS = Rule.CHAPTERS
_ENCRYPTED = Rule.ENCRYPTED_CONTENT

FINDING_KINDS: dict[str, Rule | tuple[Rule, ...] | None] = {
    # --- macros and scripts of office documents ----------------------------------------------
    "macro": _MACROS,  # VBA projects, ODF script libraries, macro hooks and key bindings
    "xlm_macro": _MACROS,  # Excel 4 macro sheets, auto_open names
    "script": _MACROS,  # ODF <office:script>
    "activex": _MACROS,  # ActiveX controls (compiled code)
    "add_in": _MACROS,  # web extensions and task panes (run code)
    # --- JavaScript and PDF actions -----------------------------------------------------------
    "javascript": _JS,
    "event_handler": _JS,  # on...= attributes of HTML/SVG
    "open_action": _JS,
    "additional_action": _JS,
    "action": _JS,  # any other action type, or a command of a presentation's animation
    "chained_action": _JS,
    "launch_action": _JS,
    "submit_form": _JS,
    "import_data": _JS,
    "embedded_goto": _JS,
    "form_field_script": _JS,
    "form_calculation": _JS,  # /CO: fields recalculated by scripts
    "rich_media": _JS,  # Flash and rich media (scriptable players)
    "3d_content": _JS,  # U3D/PRC with their scripts
    "movie": _JS,
    "sound": _JS,
    "screen_annotation": _JS,
    "rendition": _JS,
    "alternate_presentation": _JS,
    "postscript": _JS,  # PostScript XObjects (executed by some printers)
    "presentation_steps": _JS,
    # --- embedded files -----------------------------------------------------------------------
    "embedded_file": _EMBEDDED,  # PDF attachments (names tree, /EF)
    "embedded_payload": _EMBEDDED,  # the attachment's bytes
    "file_attachment": _EMBEDDED,  # file attachment annotations
    "associated_file": _EMBEDDED,  # /AF
    "portfolio": _EMBEDDED,  # PDF portfolios (/Collection)
    "ole_object": _EMBEDDED,  # OLE objects, embedded packages, altChunks
    "embedded_object": _EMBEDDED,  # ODF embedded objects, applets, 3D models
    "embedded_content": _EMBEDDED,  # HTML/EPUB frames, objects, embeds, other media
    "binary_part": _EMBEDDED,  # OOXML parts of a binary content type
    # --- external references ------------------------------------------------------------------
    "external_reference": _EXTERNAL,  # loads from elsewhere (URLs, external streams, XInclude)
    "external_relationship": _EXTERNAL,  # OOXML/ODF relationships to outside targets
    "external_link": _EXTERNAL,  # spreadsheet links to other workbooks
    "remote_template": _EXTERNAL,  # attachedTemplate
    "remote_goto": _EXTERNAL,  # PDF GoToR: opens another file
    "data_connection": _EXTERNAL,  # queries, mail merge sources, databases
    "dde": _EXTERNAL,
    "field": _EXTERNAL,  # Word fields that include, fetch or run something
    "formula": _EXTERNAL,  # formulas calling another program or document
    "base_uri": _EXTERNAL,  # PDF catalog /URI base
    "base_url": _EXTERNAL,  # HTML <base>, xml:base
    "web_capture": _EXTERNAL,  # PDF web capture: the pages' source URLs
    # --- hyperlinks ---------------------------------------------------------------------------
    "hyperlink": _LINKS,
    "link": _LINKS,
    "unsafe_link": _LINKS,  # file:, data:, unknown schemes: removed under every policy
    # --- comments, tracked changes, reviewers -------------------------------------------------
    "comments": _REVIEW,
    "tracked_changes": _REVIEW,
    # reviewers' names, annotation authors; editing session ids (rsid) are document metadata
    "personal_data": (_REVIEW, _META),
    # --- document metadata --------------------------------------------------------------------
    "document_info": _META,  # PDF /Info
    "xmp_metadata": (_META, _IMAGE_META),
    "metadata": (_META, _IMAGE_META),  # docProps, meta.xml, OPF metadata, thumbnails
    "custom_properties": _META,
    "custom_xml": _META,  # data parts stored with a document
    "hidden_data": _META,  # document variables, field data
    "meta": _META,  # HTML <meta>
    "private_application_data": _META,  # PDF /PieceInfo
    "printer_settings": _META,
    # --- picture metadata ---------------------------------------------------------------------
    "exif": _IMAGE_META,
    "gps_location": _IMAGE_META,
    "iptc": _IMAGE_META,
    "comment": _IMAGE_META,  # text chunks and comments of a picture
    "thumbnail": _IMAGE_META,
    # --- hidden content -----------------------------------------------------------------------
    "hidden_sheet": _HIDDEN,
    "hidden_slide": _HIDDEN,
    "hidden_text": _HIDDEN,
    # --- form fields --------------------------------------------------------------------------
    "form_field": _FORMS,  # PDF AcroForm fields, Word legacy form fields
    "form": _FORMS,  # HTML forms and controls
    "form_control": _FORMS,  # spreadsheet form controls
    "xfa_form": _FORMS,  # XML Forms Architecture (never kept: scriptable)
    # --- audio and video ----------------------------------------------------------------------
    "cover_art": _COVER,  # attached cover pictures
    "chapters": _CHAPTERS,  # chapter marks and their titles
    "device_info": (_IMAGE_META, _META),  # make, model, serial number tags of a recording
    "data_stream": None,  # data tracks (timecode, telemetry): never kept
    "media_reencoded": None,  # advanced mode: streams re-encoded
    # --- encrypted content: a file or part without its password, never inspected ----------
    "encrypted_content": _ENCRYPTED,  # held back (removed) or passed unchanged (kept)
    # --- decided by no policy -----------------------------------------------------------------
    "structure": None, "repaired": None, "encoding": None, "encryption": None,
    "type_mismatch": None, "renamed": None, "archive_member": None, "archive_comment": None,
    "pixel_reconstruction": None, "ocr": None, "values_rebuild": None, "chart": None,
    "trailing_data": None, "leading_data": None,
    "incremental_update": None, "image_format": None, "icc_profile": None, "animation": None,
    "auxiliary_image": None, "embedded_image": None, "invalid_image": None,
    "invalid_font": None, "invalid_part": None, "obfuscated_font": None, "signature": None,
    "drm": None, "hidden_part": None, "unreferenced_part": None, "orphan_part": None,
    "unknown_part": None, "missing_resource": None, "attribute": None,
    "processing_instruction": None, "xml_entities": None, "dtd": None,
    "control_characters": None, "csv_formula": None, "foreign_object": None,
    "foreign_content": None, "element": None, "template": None, "legacy_format": None,
    "encoded_attachment": None,
    "binary_workbook": None,
    "macro_enabled_type": None, "catalog_entry": None, "name_tree": None, "form_entry": None,
    "page_template": None, "usage_rights": None, "more": None,
}

# Where a refused rule's content is named in the rejection's sentence.
CONTENT_NAMES: dict[Rule, str] = {
    Rule.MACROS: "macros",
    Rule.JAVASCRIPT: "JavaScript or actions",
    Rule.EMBEDDED_FILES: "embedded files",
    Rule.EXTERNAL_REFERENCES: "external references",
    Rule.HYPERLINKS: "hyperlinks",
    Rule.REVIEW_DATA: "comments, tracked changes or reviewers' names",
    Rule.DOCUMENT_METADATA: "document metadata",
    Rule.IMAGE_METADATA: "picture metadata",
    Rule.HIDDEN_CONTENT: "hidden content",
    Rule.FORM_FIELDS: "form fields",
    Rule.COVER_ART: "cover pictures",
    Rule.CHAPTERS: "chapters",
    Rule.ENCRYPTED_CONTENT: "encrypted content",
}

UNDECLARED: set[str] = set()  # kinds recorded that this module does not declare (a bug)


def rule_of(kind: str, rule: Rule | None = None) -> Rule | None:
    """The rule that decides findings of `kind` (`rule` chooses among a shared kind's rules).
    An undeclared kind is remembered in UNDECLARED and decided by no rule."""
    if kind not in FINDING_KINDS:
        UNDECLARED.add(kind)
        return None
    declared = FINDING_KINDS[kind]
    if isinstance(declared, tuple):
        return rule if rule in declared else declared[0]
    return declared
