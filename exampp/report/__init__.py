"""Reports: plots of analysis results (PNG via matplotlib's Agg renderer)."""
