from hug_vis_dataset.space.metric_app import launch

launch(__file__)
