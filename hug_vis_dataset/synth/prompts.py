"""Mandarin prompts of the synthetic grid: ten scripts per emotion.

Written in the spirit of the illustrative prompts of paper Table 1 (the release does not
publish its 70 scripts). Emotion ``e`` and script ``s`` (1-based) give
``PROMPTS[e][(s - 1) % 10]``, so grids with more than ten scripts reuse prompts cyclically.

Example:
    >>> from hug_vis_dataset.datamodel.grid import Emotion
    >>> prompt_for(Emotion.HAPPY, 1)
    '我终于抢到演唱会的票了，太开心了！'
    >>> prompt_for("Neutral", 11) == prompt_for("Neutral", 1)
    True
"""

from __future__ import annotations

from ..datamodel.grid import Emotion, parse_emotion

PROMPTS: dict[Emotion, tuple[str, ...]] = {
    Emotion.HAPPY: (
        "我终于抢到演唱会的票了，太开心了！",
        "我们的项目拿了第一名，大家辛苦了！",
        "今天是我的生日，谢谢你们来陪我！",
        "好消息，我被理想的学校录取了！",
        "你看，窗外下雪了，真漂亮啊！",
        "这道菜太好吃了，我还想再来一碗！",
        "周末我们一起去海边玩吧！",
        "我的小猫终于找回来了，真好！",
        "考试全部通过了，我要好好庆祝一下！",
        "欢迎你回家，我们都很想你！",
    ),
    Emotion.ANGRY: (
        "够了！我不想再听任何借口。",
        "你怎么又把我的东西弄坏了！",
        "说了多少遍了，为什么还是不改？",
        "别再骗我了，我什么都知道！",
        "这件事你必须给我一个交代！",
        "你凭什么随便翻我的东西？",
        "我已经等了整整两个小时了！",
        "出去！现在就给我出去！",
        "这种态度我绝对不能接受！",
        "你再说一遍试试看！",
    ),
    Emotion.SAD: (
        "我盼望的一切都落空了，现在只剩我一个人。",
        "他走了以后，家里一下子安静了。",
        "我真的已经尽力了，可还是不行。",
        "那些日子再也回不来了。",
        "每天晚上我都会想起她。",
        "原来我一直都是多余的那个人。",
        "老房子拆了，什么都没有留下。",
        "我不知道明天该怎么办。",
        "这封信我一直没有勇气打开。",
        "对不起，我没能保护好你。",
    ),
    Emotion.AFRAID: (
        "别过来！求求你不要伤害我！",
        "门外好像有人，你听见了吗？",
        "灯怎么突然灭了，我好害怕。",
        "快跑，后面有东西在追我们！",
        "我不敢一个人待在这里。",
        "电话那头一直没有声音。",
        "那个人已经跟了我三条街了。",
        "别松手，我快要掉下去了！",
        "地板在晃，是不是地震了？",
        "求你别丢下我一个人。",
    ),
    Emotion.DISGUSTED: (
        "快把这个拿走！我看一眼都受不了。",
        "这是什么味道，太恶心了。",
        "垃圾桶里全是虫子，真受不了。",
        "他竟然把吃剩的饭倒在桌上。",
        "别碰我，你手上全是油。",
        "这种虚伪的人我最讨厌了。",
        "牛奶早就坏了，你还喝？",
        "厕所脏成这样，怎么进去啊。",
        "他说话的样子让我很反感。",
        "把那双臭袜子扔出去！",
    ),
    Emotion.SURPRISED: (
        "帘子后面什么都没有，那影子为什么会动？",
        "什么？你明天就要出国了？",
        "天哪，这真的是你做的吗？",
        "你怎么突然回来了？",
        "这么多礼物都是给我的？",
        "原来他们早就认识了！",
        "不会吧，彩票真的中了？",
        "门怎么自己打开了？",
        "你居然还记得这件事！",
        "外面怎么一下子全黑了？",
    ),
    Emotion.NEUTRAL: (
        "会议在下午三点，记得带上材料。",
        "明天早上八点在公司门口集合。",
        "请把报告发到我的邮箱。",
        "这趟列车开往北京南站。",
        "图书馆周一到周五开放。",
        "今天的气温是二十度左右。",
        "请在表格上填写你的名字。",
        "下一站是人民广场。",
        "快递已经放在前台了。",
        "这本书一共有十二章。",
    ),
}


def prompt_for(emotion: "Emotion | str", script_id: int) -> str:
    """The Mandarin prompt of one (emotion, script) pair; scripts cycle every ten.

    Raises:
        ValueError: ``script_id`` < 1 or an unknown emotion.
    """
    if isinstance(script_id, bool) or not isinstance(script_id, int) or script_id < 1:
        raise ValueError(f"script_id must be a positive integer, got {script_id!r}")
    table = PROMPTS[parse_emotion(emotion)]
    return table[(script_id - 1) % len(table)]


def is_han(char: str) -> bool:
    """True for a CJK unified ideograph (one spoken syllable each).

    Example:
        >>> [is_han(c) for c in "好！a"]
        [True, False, False]
    """
    return "\u4e00" <= char <= "\u9fff"
