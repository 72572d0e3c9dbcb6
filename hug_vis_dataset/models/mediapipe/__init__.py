"""MediaPipe's human models (pose, hands, face, selfie segmentation) run here without MediaPipe itself.

The ``.tflite`` files come out of the pinned ``mediapipe==0.10.21`` wheel through the weights layer
(``hugvis weights download mediapipe``; :mod:`hug_vis_dataset.weights`) and run with ``ai-edge-litert``
(:mod:`~.runtime`). The graph logic around them, which is C++ calculators in MediaPipe's repository, is
re-derived here from its published graph definitions (each module names the ``.pbtxt`` files and
calculators it follows):

* :mod:`~.geometry`: rotated regions of interest (``NormalizedRect`` in pixels), the rectangle
  calculators (``AlignmentPointsRectsCalculator``, ``DetectionsToRectsCalculator``,
  ``RectTransformationCalculator``), the letterboxed crop of ``ImageToTensorCalculator`` and the
  projection of tensor coordinates back to the image (``LandmarkLetterboxRemovalCalculator`` +
  ``LandmarkProjectionCalculator``, ``DetectionProjectionCalculator``);
* :mod:`~.ssd`: anchors (``SsdAnchorsCalculator``), box and keypoint decoding
  (``TensorsToDetectionsCalculator``) and weighted non-maximum suppression (``NonMaxSuppressionCalculator``)
  for the pose, palm and face detectors;
* :mod:`~.pose`, :mod:`~.hands`, :mod:`~.face`: the trackers (detection when there is no region from the
  previous frame, landmarks, the next frame's region from those landmarks);
* :mod:`~.holistic`: one person's body, hands and face per frame (``holistic_landmark_cpu.pbtxt``'s
  structure: hands and face from the pose), the network the human-motion metrics are given;
* :mod:`~.segmentation`: the selfie segmentation mask (the matting baseline).

Coordinates: continuous pixel coordinates, the image's top-left corner at ``(0, 0)``, so pixel ``(i, j)``
covers ``[i, i+1) x [j, j+1)``: MediaPipe's normalised coordinates times the image size.
"""
