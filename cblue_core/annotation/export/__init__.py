"""Exports of a split at any gold version, each with a reader so that an export reads back.
One module per target format:

- :mod:`.official`: the task's own file format (:func:`export_official`). Records whose gold is
  the ingested one are written from their ``raw`` record (same content as the original); edited
  records are encoded by the task's codec (:mod:`cblue_core.io.writers`), in the file's offset
  convention, keeping every other field of their input record (CHIP-STS's ``category``, fields
  a file adds). The file gets the line ending the ingested file had (CRLF files come back CRLF).
- :mod:`.brat`: brat standoff (:func:`to_brat` / :func:`from_brat`): one ``.txt`` and one
  ``.ann`` per example; ``T`` lines for spans, ``R`` lines for CMeIE relations (their mentions
  placed at their first occurrence), ``A`` lines for CMeIE's ``Combined`` flag; plus
  ``annotation.conf`` (entity types, ``<OVERLAP>`` so that nested and overlapping spans are
  valid, CMeIE relations with their argument types from the 53 schemas) and ``visual.conf``
  (the Chinese names as display labels). brat type names must match ``[A-Za-z0-9_-]+``: see
  :func:`brat_type_id` (:mod:`.brat_ids`).
- :mod:`.doccano`: doccano JSONL (:func:`to_doccano` / :func:`from_doccano`): ``{"text",
  "label": [[start, end, type]]}`` for spans, ``{"text", "label": [labels]}`` for labels and
  CDN terms, doccano's ``entities`` / ``relations`` for CMeIE; :func:`doccano_readme` says which
  project settings the import needs (overlapping spans, relation labeling).
- :mod:`.label_studio`: Label Studio JSON (:func:`to_label_studio` / :func:`from_label_studio`):
  tasks whose ``annotations`` (gold) and ``predictions`` (a run, optional) hold results of type
  ``labels`` (spans, CMeIE mentions), ``relation`` (CMeIE) or ``choices`` (labels, terms);
  :func:`label_studio_config` is the labeling config they validate against.

Each format escapes what it can escape and refuses, before writing anything, what it cannot
(a ValueError naming the example and the field): control and line-separator characters would
otherwise inject lines into brat's files or make Label Studio's XML invalid (:mod:`.characters`).

Offsets are half-open everywhere here, as in the core (brat, doccano and Label Studio all use
end-exclusive offsets, in Unicode code points). Exported records carry ``cblue_index`` (and
``cblue_key`` when the task matches records on an id) so that readers restore each example's
identity. :func:`export_dataset` writes any of the four formats to disk (the CLI's ``export``,
:mod:`.write`); :func:`export_download` builds the same files as one download.
"""
from .archive import unzip_files, zip_files
from .brat import brat_conf, brat_visual_conf, from_brat, to_brat
from .brat_ids import (
    BRAT_OVERLAP,
    CMEIE_PREDICATE_IDS,
    CMEIE_SCHEMAS,
    CMEIE_SYNONYM_TYPES,
    CMEIE_TYPE_IDS,
    brat_type_id,
    brat_type_name,
)
from .doccano import doccano_files, doccano_readme, from_doccano, to_doccano
from .formats import (
    FORMAT_CHECKS,
    FORMAT_HOLDS,
    FORMAT_TITLES,
    FORMATS,
    content_refusal,
    download_name,
    export_refusals,
    export_stem,
    format_files,
    format_refusal,
)
from .label_studio import from_label_studio, label_studio_config, label_studio_files, to_label_studio
from .official import export_official, official_records
from .write import Download, export_dataset, export_download

__all__ = [
    "BRAT_OVERLAP",
    "CMEIE_PREDICATE_IDS",
    "CMEIE_SCHEMAS",
    "CMEIE_SYNONYM_TYPES",
    "CMEIE_TYPE_IDS",
    "FORMATS",
    "FORMAT_CHECKS",
    "FORMAT_HOLDS",
    "FORMAT_TITLES",
    "Download",
    "brat_conf",
    "brat_type_id",
    "brat_type_name",
    "brat_visual_conf",
    "content_refusal",
    "doccano_files",
    "doccano_readme",
    "download_name",
    "export_dataset",
    "export_download",
    "export_official",
    "export_refusals",
    "export_stem",
    "format_files",
    "format_refusal",
    "from_brat",
    "from_doccano",
    "from_label_studio",
    "label_studio_config",
    "label_studio_files",
    "official_records",
    "to_brat",
    "to_doccano",
    "to_label_studio",
    "unzip_files",
    "zip_files",
]
