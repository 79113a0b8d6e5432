"""Orden ``agente limpiar --dias N`` (se engancha en ``agente/cli.py`` con ``registrar(app)``)."""

from __future__ import annotations

import typer


def registrar(app: typer.Typer) -> None:
    @app.command("limpiar")
    def limpiar(
        dias: int = typer.Option(
            30, "--dias", min=1, help="Días sin actividad tras los que se borran los checkpoints."
        ),
    ) -> None:
        """Borra los checkpoints de conversaciones sin actividad hace más de N días.

        Nunca toca una conversación que espera a un encargado ni las tablas de negocio o
        de auditoría. Se puede programar en todos los servidores: solo uno la ejecuta.
        """
        from agente.bd import url_basedatos
        from agente.migraciones import migrar
        from agente.nucleo.ajustes import ajustes
        from agente.nucleo.bd import abrir_pool, comprobar_conexion
        from agente.nucleo.errores import ErrorDominio
        from agente.retencion import limpiar as limpiar_checkpoints

        try:
            aj = ajustes()
            url = url_basedatos(aj)
            comprobar_conexion(url, ajuste="DATABASE_URL" if aj.database_url else "AGENTE_PGDATA")
            migrar(url)
            pool = abrir_pool(url, max_size=2)
            try:
                informe = limpiar_checkpoints(pool, dias=dias)
            finally:
                pool.close()
        except ErrorDominio as exc:
            typer.echo(f"Error: {exc.mensaje}", err=True)
            raise typer.Exit(code=2) from None
        if informe.omitida:
            typer.echo("Otro servidor está haciendo la limpieza ahora mismo: no se ha hecho nada.")
            return
        typer.echo(
            f"Checkpoints borrados de {informe.limpiados} conversaciones sin actividad "
            f"desde hace más de {dias} días."
        )
        if informe.ocupados:
            typer.echo(f"{len(informe.ocupados)} conversaciones estaban en uso: se limpiarán la próxima vez.")
