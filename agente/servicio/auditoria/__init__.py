"""Auditoría: el ``informe`` reúne lo que salió sin firma, las firmas (``auditoria_firmas``),
la política (``auditoria_politica``), el libro de compensaciones (``auditoria_libro``) y lo
que un orden en serie no habría dejado pasar (``auditoria_serie``).
"""
