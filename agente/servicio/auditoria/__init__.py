"""Auditoría: el ``informe`` reúne lo que salió sin firma, las firmas (``auditoria_firmas``),
la política (``auditoria_politica``) y el libro de compensaciones (``auditoria_libro``).
"""
