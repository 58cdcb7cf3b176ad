"""Review stage: a recorded match in, the referee's account of it out (`vision-ref review`, `vision-ref demo`).

- :func:`vision_ref.review.pipeline.review_video` -> :class:`~vision_ref.review.pipeline.ReviewResult`:
  the whole pipeline (calibrate, track, segment, infer, adjudicate) and every output.
- :mod:`vision_ref.review.report`: the self-contained HTML report.
- :mod:`vision_ref.review.diagram`: top-down shot diagrams with numbered contacts.
- :mod:`vision_ref.review.annotate`: the annotated video.
- :mod:`vision_ref.review.demo`: the bundled sample.

Heavy modules are imported by the CLI handlers only (see :mod:`vision_ref.review.cli`).
"""
