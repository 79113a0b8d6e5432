"""El informe en Markdown (``--informe``) y la tabla de resultados de ``docs/evaluacion.md``."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from agente.evaluacion.suite import Informe

__all__ = ["actualizar_tabla", "markdown"]

MARCA_INICIO = "<!-- resultados:inicio -->"
MARCA_FIN = "<!-- resultados:fin -->"


def _num(x: float) -> str:
    return f"{x:.3f}".replace(".", ",")


def markdown(informe: Informe) -> str:
    datos = informe.como_json()
    lineas = [
        f"# Evaluación del agente con `{datos['modelo']}`",
        "",
        f"{len(datos['tareas'])} tareas, k = {datos['k']}, {datos['segundos']} s. "
        f"Escalado: precisión {_num(datos['escalado']['precision'])}, "
        f"recall {_num(datos['escalado']['recall'])}. "
        f"Afirmaciones falsas del agente: {datos['afirmaciones_falsas']} "
        f"(tasa por intento {_num(datos['tasa_afirmaciones_falsas'])}). "
        f"Preguntas aclaratorias: {_num(datos['aclaraciones']['ambiguas'])} en las peticiones ambiguas, "
        f"{_num(datos['aclaraciones']['innecesarias'])} sin necesidad en las claras.",
        "",
        f"| k | pass^k | comprensión ({datos['tareas_comprension']}) | resto |",
        "|---|---|---|---|",
        *[f"| {n} | {_num(v)} | {_num(datos['pass_k_comprension'].get(n, 0))} | "
          f"{_num(datos['pass_k_resto'].get(n, 0))} |" for n, v in datos["pass_k"].items()],
        "",
        "| Tarea | Éxitos/intentos | Tokens por intento | Segundos por intento |",
        "|---|---|---|---|",
        *[f"| `{t['id']}` | {t['exitos']}/{t['intentos']} | {t['tokens']:.0f} | {t['segundos']} |"
          for t in datos["tareas"]],
    ]
    if datos["omitidas"]:
        lineas += ["", "Omitidas:", *[f"- `{o['id']}`: {o['motivo']}" for o in datos["omitidas"]]]
    fallidas = [t for t in datos["tareas"] if t["fallos"]]
    if fallidas:
        lineas += ["", "## Fallos"]
        for t in fallidas:
            for f in t["fallos"]:
                lineas += ["", f"### `{t['id']}`, intento {f['intento']}", ""]
                lineas += [f"- {m}" for m in f["motivos"]]
                lineas += ["", "```text"]
                lineas += [f"{m['rol']}> {m['texto']}" for m in f["transcripcion"]]
                lineas += ["```"]
    return "\n".join(lineas) + "\n"


def actualizar_tabla(informe: Informe, documento: Path) -> None:
    """Pone o actualiza la fila de este modelo en la tabla entre las marcas del documento."""
    texto = documento.read_text(encoding="utf-8")
    if MARCA_INICIO not in texto or MARCA_FIN not in texto:
        raise ValueError(f"{documento} no tiene las marcas de la tabla de resultados")
    antes, resto = texto.split(MARCA_INICIO, 1)
    tabla, despues = resto.split(MARCA_FIN, 1)
    datos = informe.como_json()
    pk = datos["pass_k"]
    fila = (f"| `{datos['modelo']}` | {len(datos['tareas'])} | {datos['k']} | "
            f"{_num(pk.get('1', 0))} | {_num(pk.get(str(datos['k']), 0))} | "
            f"{_num(datos['escalado']['precision'])} | {_num(datos['escalado']['recall'])} | "
            f"{dt.date.today().isoformat()} |")
    filas = [f for f in tabla.strip().splitlines()
             if f.startswith("|") and not re.match(rf"\| `{re.escape(datos['modelo'])}` \|", f)]
    cabecera = [f for f in filas if f.startswith("| Modelo") or f.startswith("|---")]
    cuerpo = [f for f in filas if f not in cabecera] + [fila]
    if not cabecera:
        cabecera = ["| Modelo | Tareas | k | pass^1 | pass^k | Precisión | Recall | Fecha |",
                    "|---|---|---|---|---|---|---|---|"]
    nueva = "\n".join([*cabecera, *sorted(cuerpo)])
    documento.write_text(f"{antes}{MARCA_INICIO}\n{nueva}\n{MARCA_FIN}{despues}", encoding="utf-8")
