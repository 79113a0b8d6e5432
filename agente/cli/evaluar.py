"""La orden ``agente evaluar``: la suite de tareas en español contra el modelo configurado.

Código de salida 0 si todas las tareas salieron bien en todos los intentos, 1 si alguna
falló (el informe dice cuál y por qué).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agente.cli.comun import errores_en_una_linea

__all__ = ["evaluar"]

DOC_RESULTADOS = Path(__file__).resolve().parents[2] / "docs" / "evaluacion.md"


@errores_en_una_linea
def evaluar(
    modelo: str | None = typer.Option(None, "--modelo", help="'offline' o 'proveedor:modelo' (por defecto AGENTE_MODELO)."),
    base_url: str | None = typer.Option(None, "--base-url", help="Servidor compatible con OpenAI."),
    k: int = typer.Option(1, "--k", min=1, max=20, help="Intentos por tarea (pass^1..pass^k)."),
    tareas: str | None = typer.Option(None, "--tareas", help="Patrón glob de ids (p. ej. 'reembolso-*'; varios con comas)."),
    json_ruta: str | None = typer.Option(None, "--json", help="Escribe el resultado en JSON."),
    informe: str | None = typer.Option(None, "--informe", help="Escribe el informe en Markdown."),
    cliente: str | None = typer.Option(None, "--cliente", help="'guion' o 'llm' (por defecto: guion con offline, llm con otro modelo)."),
    tabla: bool = typer.Option(False, "--tabla", help="Añade o actualiza la fila del modelo en docs/evaluacion.md."),
) -> None:
    """Evalúa el agente: k intentos de cada tarea, cada uno en una base nueva; pass^k y escalado.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from agente.evaluacion import cargar_tareas
    from agente.evaluacion import evaluar as evaluar_suite
    from agente.evaluacion.informe import actualizar_tabla, markdown
    from agente.evaluacion.langfuse_conjunto import ConjuntoLangfuse
    from agente.evaluacion.suite import omision
    from agente.servicio.operador.plataforma import url_basedatos
    from nucleo.ajustes import ajustes as leer_ajustes
    from nucleo.errores import ErrorDominio

    leer_ajustes.cache_clear()
    aj = leer_ajustes()
    cambios = {k_: v for k_, v in {"modelo": modelo, "modelo_base_url": base_url}.items() if v}
    aj = aj.model_copy(update=cambios)
    tipo_cliente = cliente or ("guion" if aj.modelo.strip().lower() == "offline" else "llm")
    if tipo_cliente not in ("guion", "llm"):
        raise ErrorDominio("--cliente debe ser 'guion' o 'llm'")
    lista = cargar_tareas(tareas)
    if not lista:
        raise ErrorDominio(f"ninguna tarea coincide con «{tareas}»")
    consola = Console(stderr=True)
    conjunto = ConjuntoLangfuse.desde_ajustes(aj, lista)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=consola) as progreso:
        barra = progreso.add_task(f"Evaluando {aj.modelo}", total=sum(omision(t) is None for t in lista) * k)

        def al_intento(intento) -> None:
            conjunto.anotar(intento)
            marca = "[green]bien[/green]" if intento.exito else "[red]fallo[/red]"
            progreso.console.print(f"{marca} {intento.tarea} ({intento.segundos:.1f} s)")
            progreso.advance(barra)

        resultado = evaluar_suite(lista, ajustes=aj, url=url_basedatos(aj), k=k, cliente=tipo_cliente,
                                  al_intento=al_intento)
    conjunto.cerrar()
    datos = resultado.como_json()
    if json_ruta:
        Path(json_ruta).write_text(json.dumps(datos, ensure_ascii=False, indent=2), encoding="utf-8")
    if informe:
        Path(informe).write_text(markdown(resultado), encoding="utf-8")
    if tabla:
        actualizar_tabla(resultado, DOC_RESULTADOS)
    pk = ", ".join(f"pass^{n} = {v:.3f}" for n, v in datos["pass_k"].items())
    pkc = ", ".join(f"pass^{n} = {v:.3f}" for n, v in datos["pass_k_comprension"].items())
    pkr = ", ".join(f"pass^{n} = {v:.3f}" for n, v in datos["pass_k_resto"].items())
    typer.echo(f"{len(datos['tareas'])} tareas ({len(datos['omitidas'])} omitidas), k = {k}: {pk}; "
               f"escalado: precisión {datos['escalado']['precision']:.3f}, "
               f"recall {datos['escalado']['recall']:.3f}; afirmaciones falsas: {datos['afirmaciones_falsas']} "
               f"(tasa {datos['tasa_afirmaciones_falsas']:.3f}); preguntas aclaratorias: "
               f"{datos['aclaraciones']['ambiguas']:.3f} en las ambiguas, "
               f"{datos['aclaraciones']['innecesarias']:.3f} sin necesidad; "
               f"comprensión ({datos['tareas_comprension']} tareas): {pkc or '-'}; resto: {pkr or '-'}; "
               f"{datos['segundos']} s")
    for t in datos["tareas"]:
        for f in t["fallos"]:
            typer.echo(f"FALLO {t['id']} (intento {f['intento']}): " + "; ".join(f["motivos"]))
    if any(t["exitos"] < t["intentos"] for t in datos["tareas"]):
        raise typer.Exit(1)

