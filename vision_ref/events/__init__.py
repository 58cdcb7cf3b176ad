"""events stage: tracks -> shot records (SHOT_RECORD.md), see docs/events.md.

- :func:`vision_ref.events.segment.segment_shots` -- shot windows (strike, struck ball, end, hand placements)
- :func:`vision_ref.events.infer.infer_shot`, :class:`vision_ref.events.infer.InferenceSettings`
- :func:`vision_ref.events.placement.check_respot` -- placement vs the decision's respot list
- :func:`vision_ref.events.synthetic.tracks_from_truth` -- perfect-detector tracks for tests/benchmarks
"""
