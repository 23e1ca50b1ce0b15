"""Gold annotation: editing, versions, agreement, review, re-scoring and exports.

The records and validation helpers are importable from here; the modules that work on a
workspace (``review``, ``rescore``, ``export``) and ``agreement`` are imported by name
(``from cblue_core.annotation.review import review_queue``), since the store imports this
package. See ``docs/annotation-api.md``.
"""
from .model import (
                    EDITABLE_CODECS,
                    Annotation,
                    AnnotationEvent,
                    EditConflict,
                    ExampleDiff,
                    GoldVersion,
                    annotation_field,
)
from .validation import allowed_predicates, combined_for, schema_types, validate_annotation

__all__ = [
                    "EDITABLE_CODECS",
                    "Annotation",
                    "AnnotationEvent",
                    "EditConflict",
                    "ExampleDiff",
                    "GoldVersion",
                    "allowed_predicates",
                    "annotation_field",
                    "combined_for",
                    "schema_types",
                    "validate_annotation",
]
