"""Reports: plots of analysis results (PNG via matplotlib's Agg renderer) and tables as JSON records."""
