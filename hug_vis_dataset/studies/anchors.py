"""The anchored scales of the MOS study: each criterion's question and what 1, 3 and 5 mean.

The criteria are the paper's (section 4.2; Tables 6, 8, 10): ID similarity, emotion naturalness,
lip synchronisation, motion naturalness. Identity is judged against the source portrait (video
tasks) or the actor's reference speech (voice cloning), as the matching metrics do.

Example:
    >>> print(anchor_markdown("lip_sync", "audio_driven").splitlines()[0])
    **Lip Synchronization**: do the lip movements match the speech?
"""

from __future__ import annotations

from .mos import CRITERIA  # the criteria's names, as the paper's tables print them (one spelling)

#: criterion -> (label, question, anchors for 1, 3 and 5). ``{ref}`` names the identity reference.
ANCHORS: dict[str, tuple[str, str, tuple[str, str, str]]] = {
    "id_similarity": (CRITERIA["id_similarity"], "is this the same person as in the {ref}?",
                      ("a different person", "similar, but clearly changed", "unmistakably the same person")),
    "emotion_naturalness": (CRITERIA["emotion_naturalness"], "is the emotion expressed natural and convincing?",
                            ("absent, wrong or unnatural", "recognisable but stiff or exaggerated",
                             "natural and convincing, like a real performance")),
    "lip_sync": (CRITERIA["lip_sync"], "do the lip movements match the speech?",
                 ("unrelated to the speech", "mostly in sync, with noticeable slips", "perfectly in sync")),
    "motion_naturalness": (CRITERIA["motion_naturalness"], "are the head and face movements natural?",
                           ("jerky, frozen or distorted", "plausible, with visible artefacts",
                            "natural, like a real recording")),
}


def reference_name(task: str) -> str:
    """What identity is judged against for a task.

    Example:
        >>> reference_name("voice_cloning"), reference_name("vision_driven")
        ("actor's reference speech", 'source portrait')
    """
    return "actor's reference speech" if task == "voice_cloning" else "source portrait"


def anchor_markdown(criterion: str, task: str) -> str:
    """The question and the 1 / 3 / 5 anchors of a criterion, as Markdown (two lines)."""
    label, question, (one, three, five) = ANCHORS[criterion]
    return (f"**{label}**: {question.format(ref=reference_name(task))}\n"
            f"1 = {one} · 3 = {three} · 5 = {five}")


def pairwise_markdown(criterion: str, task: str) -> str:
    """The pairwise question of a criterion, as Markdown: which of A and B is better on it.

    Example:
        >>> print(pairwise_markdown("lip_sync", "audio_driven"))
        **Which is better on Lip Synchronization?** (do the lip movements match the speech?) Choose A, B or Tie.
    """
    label, question, _ = ANCHORS[criterion]
    return (f"**Which is better on {label}?** ({question.format(ref=reference_name(task))}) "
            "Choose A, B or Tie.")
